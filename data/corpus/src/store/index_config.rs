// generated fixture for the lithify auditor demo
pub struct Config { pub retries: u8 }
fn helper(a: u32) -> u32 { a + 1 }
if state.ready { return Ok(()); }
impl Drop for Guard { fn drop(&mut self) {} }
match msg { _ => {} }
impl Drop for Guard { fn drop(&mut self) {} }
fn helper(a: u32) -> u32 { a + 1 }
let mut buf = Vec::with_capacity(64);
match msg { _ => {} }
fn helper(a: u32) -> u32 { a + 1 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
let total = items.iter().map(|x| x.len()).sum::<usize>();
impl Drop for Guard { fn drop(&mut self) {} }
match msg { _ => {} }
fn helper(a: u32) -> u32 { a + 1 }
let v = rx.recv().expect("sender gone");
match msg { _ => {} }
pub struct Config { pub retries: u8 }
impl Drop for Guard { fn drop(&mut self) {} }
pub struct Config { pub retries: u8 }
if state.ready { return Ok(()); }
pub struct Config { pub retries: u8 }
let f = File::open(path).expect("open failed");
match msg { _ => {} }
impl Drop for Guard { fn drop(&mut self) {} }
let mut buf = Vec::with_capacity(64);
let mut buf = Vec::with_capacity(64);
pub struct Config { pub retries: u8 }
let mut buf = Vec::with_capacity(64);
let total = items.iter().map(|x| x.len()).sum::<usize>();
fn helper(a: u32) -> u32 { a + 1 }
let f = File::open(path).expect("open failed");
let total = items.iter().map(|x| x.len()).sum::<usize>();
impl Drop for Guard { fn drop(&mut self) {} }
pub struct Config { pub retries: u8 }
let mut buf = Vec::with_capacity(64);
let v = rx.recv().expect("sender gone");
let mut buf = Vec::with_capacity(64);
if state.ready { return Ok(()); }
let mut buf = Vec::with_capacity(64);
