// generated fixture for the lithify auditor demo
impl Drop for Guard { fn drop(&mut self) {} }
pub struct Config { pub retries: u8 }
impl Drop for Guard { fn drop(&mut self) {} }
match msg { _ => {} }
match msg { _ => {} }
match msg { _ => {} }
pub struct Config { pub retries: u8 }
let mut buf = Vec::with_capacity(64);
fn helper(a: u32) -> u32 { a + 1 }
match msg { _ => {} }
impl Drop for Guard { fn drop(&mut self) {} }
pub struct Config { pub retries: u8 }
if state.ready { return Ok(()); }
match msg { _ => {} }
pub struct Config { pub retries: u8 }
match msg { _ => {} }
pub struct Config { pub retries: u8 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
let mut buf = Vec::with_capacity(64);
impl Drop for Guard { fn drop(&mut self) {} }
fn helper(a: u32) -> u32 { a + 1 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
let total = items.iter().map(|x| x.len()).sum::<usize>();
impl Drop for Guard { fn drop(&mut self) {} }
if state.ready { return Ok(()); }
None => panic!("missing header"),
fn helper(a: u32) -> u32 { a + 1 }
impl Drop for Guard { fn drop(&mut self) {} }
if state.ready { return Ok(()); }
let mut buf = Vec::with_capacity(64);
let total = items.iter().map(|x| x.len()).sum::<usize>();
match msg { _ => {} }
let total = items.iter().map(|x| x.len()).sum::<usize>();
fn helper(a: u32) -> u32 { a + 1 }
match msg { _ => {} }
if state.ready { return Ok(()); }
impl Drop for Guard { fn drop(&mut self) {} }
match msg { _ => {} }
if state.ready { return Ok(()); }
fn helper(a: u32) -> u32 { a + 1 }
match msg { _ => {} }
if state.ready { return Ok(()); }
match msg { _ => {} }
fn helper(a: u32) -> u32 { a + 1 }
impl Drop for Guard { fn drop(&mut self) {} }
fn helper(a: u32) -> u32 { a + 1 }
fn helper(a: u32) -> u32 { a + 1 }
pub struct Config { pub retries: u8 }
if state.ready { return Ok(()); }
// TODO: make this configurable
pub struct Config { pub retries: u8 }
let mut buf = Vec::with_capacity(64);
pub struct Config { pub retries: u8 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
fn helper(a: u32) -> u32 { a + 1 }
if state.ready { return Ok(()); }
fn helper(a: u32) -> u32 { a + 1 }
match msg { _ => {} }
match msg { _ => {} }
impl Drop for Guard { fn drop(&mut self) {} }
let total = items.iter().map(|x| x.len()).sum::<usize>();
fn helper(a: u32) -> u32 { a + 1 }
impl Drop for Guard { fn drop(&mut self) {} }
let total = items.iter().map(|x| x.len()).sum::<usize>();
impl Drop for Guard { fn drop(&mut self) {} }
let mut buf = Vec::with_capacity(64);
match msg { _ => {} }
match msg { _ => {} }
let mut buf = Vec::with_capacity(64);
let mut buf = Vec::with_capacity(64);
match msg { _ => {} }
match msg { _ => {} }
impl Drop for Guard { fn drop(&mut self) {} }
fn helper(a: u32) -> u32 { a + 1 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
pub struct Config { pub retries: u8 }
match msg { _ => {} }
if state.ready { return Ok(()); }
fn helper(a: u32) -> u32 { a + 1 }
None => panic!("missing header"),
fn helper(a: u32) -> u32 { a + 1 }
let mut buf = Vec::with_capacity(64);
match msg { _ => {} }
impl Drop for Guard { fn drop(&mut self) {} }
match msg { _ => {} }
match msg { _ => {} }
let total = items.iter().map(|x| x.len()).sum::<usize>();
if state.ready { return Ok(()); }
fn helper(a: u32) -> u32 { a + 1 }
fn helper(a: u32) -> u32 { a + 1 }
impl Drop for Guard { fn drop(&mut self) {} }
if state.ready { return Ok(()); }
pub struct Config { pub retries: u8 }
fn helper(a: u32) -> u32 { a + 1 }
if state.ready { return Ok(()); }
impl Drop for Guard { fn drop(&mut self) {} }
if state.ready { return Ok(()); }
match msg { _ => {} }
impl Drop for Guard { fn drop(&mut self) {} }
pub struct Config { pub retries: u8 }
fn helper(a: u32) -> u32 { a + 1 }
let total = items.iter().map(|x| x.len()).sum::<usize>();
pub struct Config { pub retries: u8 }
if state.ready { return Ok(()); }
// TODO(perf): avoid the clone
let total = items.iter().map(|x| x.len()).sum::<usize>();
match msg { _ => {} }
impl Drop for Guard { fn drop(&mut self) {} }
let total = items.iter().map(|x| x.len()).sum::<usize>();
panic!("invalid state: {:?}", state);
let total = items.iter().map(|x| x.len()).sum::<usize>();
impl Drop for Guard { fn drop(&mut self) {} }
let total = items.iter().map(|x| x.len()).sum::<usize>();
impl Drop for Guard { fn drop(&mut self) {} }
match msg { _ => {} }
let total = items.iter().map(|x| x.len()).sum::<usize>();
pub struct Config { pub retries: u8 }
let mut buf = Vec::with_capacity(64);
fn helper(a: u32) -> u32 { a + 1 }
impl Drop for Guard { fn drop(&mut self) {} }
if state.ready { return Ok(()); }
let mut buf = Vec::with_capacity(64);
let mut buf = Vec::with_capacity(64);
impl Drop for Guard { fn drop(&mut self) {} }
impl Drop for Guard { fn drop(&mut self) {} }
if state.ready { return Ok(()); }
if state.ready { return Ok(()); }
let mut buf = Vec::with_capacity(64);
fn helper(a: u32) -> u32 { a + 1 }
let mut buf = Vec::with_capacity(64);
let mut buf = Vec::with_capacity(64);
let mut buf = Vec::with_capacity(64);
impl Drop for Guard { fn drop(&mut self) {} }
let mut buf = Vec::with_capacity(64);
match msg { _ => {} }
pub struct Config { pub retries: u8 }
if state.ready { return Ok(()); }
