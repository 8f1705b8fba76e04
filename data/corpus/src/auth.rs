// generated fixture for the lithify auditor demo
fn helper(a: u32) -> u32 { a + 1 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
fn helper(a: u32) -> u32 { a + 1 }
let cfg = load_config().unwrap();
pub struct Config { pub retries: u8 }
fn helper(a: u32) -> u32 { a + 1 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
fn helper(a: u32) -> u32 { a + 1 }
if state.ready { return Ok(()); }
match msg { _ => {} }
fn helper(a: u32) -> u32 { a + 1 }
let s = unsafe { std::str::from_utf8_unchecked(b) };
pub struct Config { pub retries: u8 }
impl Drop for Guard { fn drop(&mut self) {} }
if state.ready { return Ok(()); }
match msg { _ => {} }
// TODO: make this configurable
let mut buf = Vec::with_capacity(64);
if state.ready { return Ok(()); }
match msg { _ => {} }
impl Drop for Guard { fn drop(&mut self) {} }
fn helper(a: u32) -> u32 { a + 1 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
// TODO: make this configurable
fn helper(a: u32) -> u32 { a + 1 }
match msg { _ => {} }
fn helper(a: u32) -> u32 { a + 1 }
let mut buf = Vec::with_capacity(64);
impl Drop for Guard { fn drop(&mut self) {} }
// TODO(perf): avoid the clone
impl Drop for Guard { fn drop(&mut self) {} }
let total = items.iter().map(|x| x.len()).sum::<usize>();
impl Drop for Guard { fn drop(&mut self) {} }
if state.ready { return Ok(()); }
fn helper(a: u32) -> u32 { a + 1 }
match msg { _ => {} }
fn helper(a: u32) -> u32 { a + 1 }
pub struct Config { pub retries: u8 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
if state.ready { return Ok(()); }
match msg { _ => {} }
impl Drop for Guard { fn drop(&mut self) {} }
impl Drop for Guard { fn drop(&mut self) {} }
fn helper(a: u32) -> u32 { a + 1 }
pub struct Config { pub retries: u8 }
fn helper(a: u32) -> u32 { a + 1 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
impl Drop for Guard { fn drop(&mut self) {} }
pub struct Config { pub retries: u8 }
impl Drop for Guard { fn drop(&mut self) {} }
if state.ready { return Ok(()); }
fn helper(a: u32) -> u32 { a + 1 }
let mut buf = Vec::with_capacity(64);
match msg { _ => {} }
fn helper(a: u32) -> u32 { a + 1 }
fn helper(a: u32) -> u32 { a + 1 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
match msg { _ => {} }
// TODO(perf): avoid the clone
let total = items.iter().map(|x| x.len()).sum::<usize>();
fn helper(a: u32) -> u32 { a + 1 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
impl Drop for Guard { fn drop(&mut self) {} }
let total = items.iter().map(|x| x.len()).sum::<usize>();
let mut buf = Vec::with_capacity(64);
