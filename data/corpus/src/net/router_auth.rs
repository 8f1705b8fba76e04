// generated fixture for the lithify auditor demo
match msg { _ => {} }
let mut buf = Vec::with_capacity(64);
match msg { _ => {} }
let mut buf = Vec::with_capacity(64);
let total = items.iter().map(|x| x.len()).sum::<usize>();
fn helper(a: u32) -> u32 { a + 1 }
impl Drop for Guard { fn drop(&mut self) {} }
match msg { _ => {} }
match msg { _ => {} }
match msg { _ => {} }
let mut buf = Vec::with_capacity(64);
impl Drop for Guard { fn drop(&mut self) {} }
fn helper(a: u32) -> u32 { a + 1 }
pub struct Config { pub retries: u8 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
match msg { _ => {} }
fn helper(a: u32) -> u32 { a + 1 }
impl Drop for Guard { fn drop(&mut self) {} }
let total = items.iter().map(|x| x.len()).sum::<usize>();
fn helper(a: u32) -> u32 { a + 1 }
let mut buf = Vec::with_capacity(64);
let f = File::open(path).expect("open failed");
let total = items.iter().map(|x| x.len()).sum::<usize>();
if state.ready { return Ok(()); }
if state.ready { return Ok(()); }
let mut buf = Vec::with_capacity(64);
impl Drop for Guard { fn drop(&mut self) {} }
pub struct Config { pub retries: u8 }
match msg { _ => {} }
pub struct Config { pub retries: u8 }
if state.ready { return Ok(()); }
fn helper(a: u32) -> u32 { a + 1 }
let mut buf = Vec::with_capacity(64);
let mut buf = Vec::with_capacity(64);
if state.ready { return Ok(()); }
let mut buf = Vec::with_capacity(64);
if state.ready { return Ok(()); }
impl Drop for Guard { fn drop(&mut self) {} }
let total = items.iter().map(|x| x.len()).sum::<usize>();
pub struct Config { pub retries: u8 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
