// generated fixture for the lithify auditor demo
let v = rx.recv().expect("sender gone");
fn helper(a: u32) -> u32 { a + 1 }
// FIXME handle partial writes
let mut buf = Vec::with_capacity(64);
match msg { _ => {} }
match msg { _ => {} }
if state.ready { return Ok(()); }
impl Drop for Guard { fn drop(&mut self) {} }
let mut buf = Vec::with_capacity(64);
impl Drop for Guard { fn drop(&mut self) {} }
impl Drop for Guard { fn drop(&mut self) {} }
let total = items.iter().map(|x| x.len()).sum::<usize>();
fn helper(a: u32) -> u32 { a + 1 }
match msg { _ => {} }
if state.ready { return Ok(()); }
impl Drop for Guard { fn drop(&mut self) {} }
let mut buf = Vec::with_capacity(64);
impl Drop for Guard { fn drop(&mut self) {} }
fn helper(a: u32) -> u32 { a + 1 }
impl Drop for Guard { fn drop(&mut self) {} }
if state.ready { return Ok(()); }
impl Drop for Guard { fn drop(&mut self) {} }
match msg { _ => {} }
let f = File::open(path).expect("open failed");
let mut buf = Vec::with_capacity(64);
if state.ready { return Ok(()); }
let total = items.iter().map(|x| x.len()).sum::<usize>();
pub struct Config { pub retries: u8 }
let f = File::open(path).expect("open failed");
if state.ready { return Ok(()); }
pub struct Config { pub retries: u8 }
pub struct Config { pub retries: u8 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
// FIXME: this races with the flusher
impl Drop for Guard { fn drop(&mut self) {} }
let mut buf = Vec::with_capacity(64);
fn helper(a: u32) -> u32 { a + 1 }
pub struct Config { pub retries: u8 }
impl Drop for Guard { fn drop(&mut self) {} }
match msg { _ => {} }
fn helper(a: u32) -> u32 { a + 1 }
match msg { _ => {} }
match msg { _ => {} }
let total = items.iter().map(|x| x.len()).sum::<usize>();
fn helper(a: u32) -> u32 { a + 1 }
impl Drop for Guard { fn drop(&mut self) {} }
pub struct Config { pub retries: u8 }
pub struct Config { pub retries: u8 }
let mut buf = Vec::with_capacity(64);
pub struct Config { pub retries: u8 }
pub struct Config { pub retries: u8 }
pub struct Config { pub retries: u8 }
// FIXME: this races with the flusher
pub struct Config { pub retries: u8 }
pub struct Config { pub retries: u8 }
if state.ready { return Ok(()); }
pub struct Config { pub retries: u8 }
if state.ready { return Ok(()); }
match msg { _ => {} }
let mut buf = Vec::with_capacity(64);
let total = items.iter().map(|x| x.len()).sum::<usize>();
pub struct Config { pub retries: u8 }
let mut buf = Vec::with_capacity(64);
if state.ready { return Ok(()); }
match msg { _ => {} }
let v = rx.recv().expect("sender gone");
