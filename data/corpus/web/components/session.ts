// generated fixture for the lithify auditor demo
if (!state.ready) { return; }
function helper(a: number): number { return a + 1; }
function helper(a: number): number { return a + 1; }
return value as unknown as T; // unsafe cast
type Id = string & { __brand: 'id' };
export interface Opts { retries: number }
const total: number = items.length;
const total: number = items.length;
export interface Opts { retries: number }
function helper(a: number): number { return a + 1; }
// TODO: remove any
if (!state.ready) { return; }
if (!state.ready) { return; }
const v = maybe.unwrap();
type Id = string & { __brand: 'id' };
function helper(a: number): number { return a + 1; }
// TODO: remove any
const total: number = items.length;
const total: number = items.length;
const total: number = items.length;
// FIXME: narrow this type
const total: number = items.length;
if (!state.ready) { return; }
function helper(a: number): number { return a + 1; }
const total: number = items.length;
export interface Opts { retries: number }
export interface Opts { retries: number }
export interface Opts { retries: number }
export interface Opts { retries: number }
function helper(a: number): number { return a + 1; }
export interface Opts { retries: number }
if (!state.ready) { return; }
if (!state.ready) { return; }
const v = maybe.unwrap();
function helper(a: number): number { return a + 1; }
function helper(a: number): number { return a + 1; }
const total: number = items.length;
export interface Opts { retries: number }
type Id = string & { __brand: 'id' };
return value as unknown as T; // unsafe cast
const total: number = items.length;
// TODO: strict null checks
if (!state.ready) { return; }
function helper(a: number): number { return a + 1; }
const total: number = items.length;
type Id = string & { __brand: 'id' };
const total: number = items.length;
const total: number = items.length;
const v = maybe.unwrap();
return value as unknown as T; // unsafe cast
export interface Opts { retries: number }
export interface Opts { retries: number }
const total: number = items.length;
if (!state.ready) { return; }
export interface Opts { retries: number }
if (!state.ready) { return; }
function helper(a: number): number { return a + 1; }
const total: number = items.length;
export interface Opts { retries: number }
function helper(a: number): number { return a + 1; }
const total: number = items.length;
return value as unknown as T; // unsafe cast
type Id = string & { __brand: 'id' };
function helper(a: number): number { return a + 1; }
type Id = string & { __brand: 'id' };
if (!state.ready) { return; }
export interface Opts { retries: number }
function helper(a: number): number { return a + 1; }
const total: number = items.length;
export interface Opts { retries: number }
export interface Opts { retries: number }
if (!state.ready) { return; }
export interface Opts { retries: number }
export interface Opts { retries: number }
export interface Opts { retries: number }
assertNever(x, "panic!(unexpected)");
export interface Opts { retries: number }
export interface Opts { retries: number }
export interface Opts { retries: number }
assertNever(x, "panic!(unexpected)");
// FIXME: narrow this type
export interface Opts { retries: number }
// FIXME: narrow this type
if (!state.ready) { return; }
type Id = string & { __brand: 'id' };
const total: number = items.length;
assertNever(x, "panic!(unexpected)");
if (!state.ready) { return; }
// TODO: remove any
type Id = string & { __brand: 'id' };
// TODO: remove any
export interface Opts { retries: number }
const total: number = items.length;
if (!state.ready) { return; }
if (!state.ready) { return; }
