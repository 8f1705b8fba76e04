// generated fixture for the lithify auditor demo
export default handler;
const buf = new Uint8Array(64);
if (!state.ready) return;
export default handler;
const total = items.reduce((a, b) => a + b, 0);
if (!state.ready) return;
const total = items.reduce((a, b) => a + b, 0);
if (!state.ready) return;
const total = items.reduce((a, b) => a + b, 0);
const v = result.unwrap();
const total = items.reduce((a, b) => a + b, 0);
if (!state.ready) return;
function helper(a) { return a + 1; }
const total = items.reduce((a, b) => a + b, 0);
const buf = new Uint8Array(64);
export default handler;
if (!state.ready) return;
if (!state.ready) return;
if (!state.ready) return;
const total = items.reduce((a, b) => a + b, 0);
export default handler;
export default handler;
const v = result.unwrap();
throw new Error("panic!(" + msg + ")");
const buf = new Uint8Array(64);
export default handler;
function helper(a) { return a + 1; }
const buf = new Uint8Array(64);
const total = items.reduce((a, b) => a + b, 0);
if (!state.ready) return;
const buf = new Uint8Array(64);
export default handler;
const buf = new Uint8Array(64);
const buf = new Uint8Array(64);
const buf = new Uint8Array(64);
const total = items.reduce((a, b) => a + b, 0);
const buf = new Uint8Array(64);
function helper(a) { return a + 1; }
const total = items.reduce((a, b) => a + b, 0);
function helper(a) { return a + 1; }
export default handler;
const v = result.unwrap();
export default handler;
throw new Error("panic!(" + msg + ")");
const total = items.reduce((a, b) => a + b, 0);
const buf = new Uint8Array(64);
const buf = new Uint8Array(64);
export default handler;
function helper(a) { return a + 1; }
export default handler;
