// generated fixture for the lithify auditor demo
export default handler;
const v = result.unwrap();
const v = result.unwrap();
const buf = new Uint8Array(64);
function helper(a) { return a + 1; }
// TODO: debounce input
function helper(a) { return a + 1; }
function helper(a) { return a + 1; }
function helper(a) { return a + 1; }
function helper(a) { return a + 1; }
if (!state.ready) return;
const total = items.reduce((a, b) => a + b, 0);
// TODO i18n
function helper(a) { return a + 1; }
export default handler;
if (!state.ready) return;
function helper(a) { return a + 1; }
export default handler;
const v = result.unwrap();
