// generated fixture for the lithify auditor demo
fn helper(a: u32) -> u32 { a + 1 }
if state.ready { return Ok(()); }
let total = items.iter().map(|x| x.len()).sum::<usize>();
match msg { _ => {} }
fn helper(a: u32) -> u32 { a + 1 }
let cfg = load_config().unwrap();
if state.ready { return Ok(()); }
let mut buf = Vec::with_capacity(64);
pub struct Config { pub retries: u8 }
fn helper(a: u32) -> u32 { a + 1 }
let mut buf = Vec::with_capacity(64);
fn helper(a: u32) -> u32 { a + 1 }
if state.ready { return Ok(()); }
impl Drop for Guard { fn drop(&mut self) {} }
let mut buf = Vec::with_capacity(64);
let cfg = load_config().unwrap();
let n: u32 = text.parse().unwrap();
let total = items.iter().map(|x| x.len()).sum::<usize>();
impl Drop for Guard { fn drop(&mut self) {} }
pub struct Config { pub retries: u8 }
if state.ready { return Ok(()); }
pub struct Config { pub retries: u8 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
let n: u32 = text.parse().unwrap();
let cfg = load_config().unwrap();
match msg { _ => {} }
let n: u32 = text.parse().unwrap();
impl Drop for Guard { fn drop(&mut self) {} }
let total = items.iter().map(|x| x.len()).sum::<usize>();
if state.ready { return Ok(()); }
fn helper(a: u32) -> u32 { a + 1 }
pub struct Config { pub retries: u8 }
pub struct Config { pub retries: u8 }
let cfg = load_config().unwrap();
if state.ready { return Ok(()); }
let n: u32 = text.parse().unwrap();
let mut buf = Vec::with_capacity(64);
let total = items.iter().map(|x| x.len()).sum::<usize>();
impl Drop for Guard { fn drop(&mut self) {} }
if state.ready { return Ok(()); }
