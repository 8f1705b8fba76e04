// generated fixture for the lithify auditor demo
type Id = string & { __brand: 'id' };
function helper(a: number): number { return a + 1; }
if (!state.ready) { return; }
// TODO: strict null checks
// FIXME: narrow this type
type Id = string & { __brand: 'id' };
export interface Opts { retries: number }
const total: number = items.length;
const total: number = items.length;
// TODO: remove any
// TODO: remove any
// TODO: strict null checks
// TODO: strict null checks
const total: number = items.length;
export interface Opts { retries: number }
if (!state.ready) { return; }
// FIXME: narrow this type
if (!state.ready) { return; }
export interface Opts { retries: number }
if (!state.ready) { return; }
