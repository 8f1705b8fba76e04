// generated fixture for the lithify auditor demo
let total = items.iter().map(|x| x.len()).sum::<usize>();
let n: u32 = text.parse().unwrap();
let total = items.iter().map(|x| x.len()).sum::<usize>();
if state.ready { return Ok(()); }
pub struct Config { pub retries: u8 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
match msg { _ => {} }
pub struct Config { pub retries: u8 }
let cfg = load_config().unwrap();
pub struct Config { pub retries: u8 }
pub struct Config { pub retries: u8 }
let n: u32 = text.parse().unwrap();
let mut buf = Vec::with_capacity(64);
impl Drop for Guard { fn drop(&mut self) {} }
let mut buf = Vec::with_capacity(64);
fn helper(a: u32) -> u32 { a + 1 }
fn helper(a: u32) -> u32 { a + 1 }
let n: u32 = text.parse().unwrap();
pub struct Config { pub retries: u8 }
fn helper(a: u32) -> u32 { a + 1 }
fn helper(a: u32) -> u32 { a + 1 }
fn helper(a: u32) -> u32 { a + 1 }
pub struct Config { pub retries: u8 }
impl Drop for Guard { fn drop(&mut self) {} }
