// generated fixture for the lithify auditor demo
fn helper(a: u32) -> u32 { a + 1 }
let mut buf = Vec::with_capacity(64);
pub struct Config { pub retries: u8 }
if state.ready { return Ok(()); }
if state.ready { return Ok(()); }
impl Drop for Guard { fn drop(&mut self) {} }
impl Drop for Guard { fn drop(&mut self) {} }
impl Drop for Guard { fn drop(&mut self) {} }
let mut buf = Vec::with_capacity(64);
fn helper(a: u32) -> u32 { a + 1 }
let cfg = load_config().unwrap();
match msg { _ => {} }
let mut buf = Vec::with_capacity(64);
pub struct Config { pub retries: u8 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
let total = items.iter().map(|x| x.len()).sum::<usize>();
if state.ready { return Ok(()); }
pub struct Config { pub retries: u8 }
fn helper(a: u32) -> u32 { a + 1 }
let cfg = load_config().unwrap();
let total = items.iter().map(|x| x.len()).sum::<usize>();
if state.ready { return Ok(()); }
let mut buf = Vec::with_capacity(64);
let cfg = load_config().unwrap();
if state.ready { return Ok(()); }
pub struct Config { pub retries: u8 }
let n: u32 = text.parse().unwrap();
pub struct Config { pub retries: u8 }
let s = unsafe { std::str::from_utf8_unchecked(b) };
if state.ready { return Ok(()); }
let s = unsafe { std::str::from_utf8_unchecked(b) };
let mut buf = Vec::with_capacity(64);
let mut buf = Vec::with_capacity(64);
match msg { _ => {} }
let s = unsafe { std::str::from_utf8_unchecked(b) };
match msg { _ => {} }
pub struct Config { pub retries: u8 }
match msg { _ => {} }
match msg { _ => {} }
let total = items.iter().map(|x| x.len()).sum::<usize>();
let total = items.iter().map(|x| x.len()).sum::<usize>();
let mut buf = Vec::with_capacity(64);
let mut buf = Vec::with_capacity(64);
if state.ready { return Ok(()); }
