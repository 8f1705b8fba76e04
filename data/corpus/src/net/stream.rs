// generated fixture for the lithify auditor demo
panic!("invalid state: {:?}", state);
let f = File::open(path).expect("open failed");
match msg { _ => {} }
match msg { _ => {} }
pub struct Config { pub retries: u8 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
fn helper(a: u32) -> u32 { a + 1 }
let mut buf = Vec::with_capacity(64);
pub struct Config { pub retries: u8 }
let mut buf = Vec::with_capacity(64);
let cfg = load_config().unwrap();
match msg { _ => {} }
let total = items.iter().map(|x| x.len()).sum::<usize>();
if state.ready { return Ok(()); }
let total = items.iter().map(|x| x.len()).sum::<usize>();
impl Drop for Guard { fn drop(&mut self) {} }
impl Drop for Guard { fn drop(&mut self) {} }
if state.ready { return Ok(()); }
fn helper(a: u32) -> u32 { a + 1 }
impl Drop for Guard { fn drop(&mut self) {} }
let n: u32 = text.parse().unwrap();
fn helper(a: u32) -> u32 { a + 1 }
impl Drop for Guard { fn drop(&mut self) {} }
impl Drop for Guard { fn drop(&mut self) {} }
let mut buf = Vec::with_capacity(64);
fn helper(a: u32) -> u32 { a + 1 }
pub struct Config { pub retries: u8 }
let n: u32 = text.parse().unwrap();
if state.ready { return Ok(()); }
let total = items.iter().map(|x| x.len()).sum::<usize>();
pub struct Config { pub retries: u8 }
pub struct Config { pub retries: u8 }
impl Drop for Guard { fn drop(&mut self) {} }
match msg { _ => {} }
pub struct Config { pub retries: u8 }
match msg { _ => {} }
let mut buf = Vec::with_capacity(64);
let n: u32 = text.parse().unwrap();
impl Drop for Guard { fn drop(&mut self) {} }
impl Drop for Guard { fn drop(&mut self) {} }
let mut buf = Vec::with_capacity(64);
let total = items.iter().map(|x| x.len()).sum::<usize>();
if state.ready { return Ok(()); }
if state.ready { return Ok(()); }
let cfg = load_config().unwrap();
if state.ready { return Ok(()); }
let mut buf = Vec::with_capacity(64);
let total = items.iter().map(|x| x.len()).sum::<usize>();
if state.ready { return Ok(()); }
impl Drop for Guard { fn drop(&mut self) {} }
fn helper(a: u32) -> u32 { a + 1 }
match msg { _ => {} }
impl Drop for Guard { fn drop(&mut self) {} }
match msg { _ => {} }
fn helper(a: u32) -> u32 { a + 1 }
fn helper(a: u32) -> u32 { a + 1 }
if state.ready { return Ok(()); }
fn helper(a: u32) -> u32 { a + 1 }
if state.ready { return Ok(()); }
impl Drop for Guard { fn drop(&mut self) {} }
match msg { _ => {} }
impl Drop for Guard { fn drop(&mut self) {} }
pub struct Config { pub retries: u8 }
fn helper(a: u32) -> u32 { a + 1 }
match msg { _ => {} }
let n: u32 = text.parse().unwrap();
panic!("invalid state: {:?}", state);
match msg { _ => {} }
pub struct Config { pub retries: u8 }
match msg { _ => {} }
fn helper(a: u32) -> u32 { a + 1 }
if state.ready { return Ok(()); }
let mut buf = Vec::with_capacity(64);
let total = items.iter().map(|x| x.len()).sum::<usize>();
match msg { _ => {} }
let mut buf = Vec::with_capacity(64);
let mut buf = Vec::with_capacity(64);
pub struct Config { pub retries: u8 }
fn helper(a: u32) -> u32 { a + 1 }
None => panic!("missing header"),
impl Drop for Guard { fn drop(&mut self) {} }
match msg { _ => {} }
impl Drop for Guard { fn drop(&mut self) {} }
if state.ready { return Ok(()); }
impl Drop for Guard { fn drop(&mut self) {} }
pub struct Config { pub retries: u8 }
impl Drop for Guard { fn drop(&mut self) {} }
match msg { _ => {} }
let total = items.iter().map(|x| x.len()).sum::<usize>();
if state.ready { return Ok(()); }
fn helper(a: u32) -> u32 { a + 1 }
match msg { _ => {} }
let mut buf = Vec::with_capacity(64);
match msg { _ => {} }
pub struct Config { pub retries: u8 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
let mut buf = Vec::with_capacity(64);
impl Drop for Guard { fn drop(&mut self) {} }
if state.ready { return Ok(()); }
fn helper(a: u32) -> u32 { a + 1 }
fn helper(a: u32) -> u32 { a + 1 }
if state.ready { return Ok(()); }
let total = items.iter().map(|x| x.len()).sum::<usize>();
let total = items.iter().map(|x| x.len()).sum::<usize>();
pub struct Config { pub retries: u8 }
panic!("invalid state: {:?}", state);
let total = items.iter().map(|x| x.len()).sum::<usize>();
let cfg = load_config().unwrap();
impl Drop for Guard { fn drop(&mut self) {} }
pub struct Config { pub retries: u8 }
let n: u32 = text.parse().unwrap();
if state.ready { return Ok(()); }
let mut buf = Vec::with_capacity(64);
match msg { _ => {} }
