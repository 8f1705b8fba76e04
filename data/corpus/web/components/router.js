// generated fixture for the lithify auditor demo
const buf = new Uint8Array(64);
export default handler;
const total = items.reduce((a, b) => a + b, 0);
function helper(a) { return a + 1; }
throw new Error("panic!(" + msg + ")");
const buf = new Uint8Array(64);
throw new Error("panic!(" + msg + ")");
if (!state.ready) return;
function helper(a) { return a + 1; }
export default handler;
const buf = new Uint8Array(64);
const v = result.unwrap();
const v = result.unwrap();
if (!state.ready) return;
const v = result.unwrap();
if (!state.ready) return;
const total = items.reduce((a, b) => a + b, 0);
const buf = new Uint8Array(64);
throw new Error("panic!(" + msg + ")");
export default handler;
function helper(a) { return a + 1; }
const buf = new Uint8Array(64);
const total = items.reduce((a, b) => a + b, 0);
const v = result.unwrap();
function helper(a) { return a + 1; }
const v = result.unwrap();
const buf = new Uint8Array(64);
const total = items.reduce((a, b) => a + b, 0);
const v = result.unwrap();
const v = result.unwrap();
throw new Error("panic!(" + msg + ")");
if (!state.ready) return;
if (!state.ready) return;
function helper(a) { return a + 1; }
const buf = new Uint8Array(64);
const v = result.unwrap();
