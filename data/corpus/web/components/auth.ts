// generated fixture for the lithify auditor demo
const total: number = items.length;
if (!state.ready) { return; }
export interface Opts { retries: number }
const total: number = items.length;
type Id = string & { __brand: 'id' };
export interface Opts { retries: number }
const total: number = items.length;
const total: number = items.length;
export interface Opts { retries: number }
type Id = string & { __brand: 'id' };
export interface Opts { retries: number }
export interface Opts { retries: number }
const v = maybe.unwrap();
if (!state.ready) { return; }
function helper(a: number): number { return a + 1; }
type Id = string & { __brand: 'id' };
const total: number = items.length;
if (!state.ready) { return; }
const total: number = items.length;
type Id = string & { __brand: 'id' };
type Id = string & { __brand: 'id' };
if (!state.ready) { return; }
type Id = string & { __brand: 'id' };
type Id = string & { __brand: 'id' };
if (!state.ready) { return; }
const total: number = items.length;
if (!state.ready) { return; }
function helper(a: number): number { return a + 1; }
const total: number = items.length;
function helper(a: number): number { return a + 1; }
export interface Opts { retries: number }
const total: number = items.length;
const total: number = items.length;
export interface Opts { retries: number }
type Id = string & { __brand: 'id' };
if (!state.ready) { return; }
export interface Opts { retries: number }
function helper(a: number): number { return a + 1; }
if (!state.ready) { return; }
if (!state.ready) { return; }
type Id = string & { __brand: 'id' };
function helper(a: number): number { return a + 1; }
function helper(a: number): number { return a + 1; }
function helper(a: number): number { return a + 1; }
if (!state.ready) { return; }
const total: number = items.length;
type Id = string & { __brand: 'id' };
type Id = string & { __brand: 'id' };
type Id = string & { __brand: 'id' };
if (!state.ready) { return; }
if (!state.ready) { return; }
const total: number = items.length;
export interface Opts { retries: number }
if (!state.ready) { return; }
export interface Opts { retries: number }
function helper(a: number): number { return a + 1; }
export interface Opts { retries: number }
export interface Opts { retries: number }
function helper(a: number): number { return a + 1; }
if (!state.ready) { return; }
if (!state.ready) { return; }
assertNever(x, "panic!(unexpected)");
if (!state.ready) { return; }
export interface Opts { retries: number }
type Id = string & { __brand: 'id' };
if (!state.ready) { return; }
export interface Opts { retries: number }
const total: number = items.length;
export interface Opts { retries: number }
export interface Opts { retries: number }
function helper(a: number): number { return a + 1; }
type Id = string & { __brand: 'id' };
function helper(a: number): number { return a + 1; }
export interface Opts { retries: number }
if (!state.ready) { return; }
export interface Opts { retries: number }
type Id = string & { __brand: 'id' };
if (!state.ready) { return; }
if (!state.ready) { return; }
export interface Opts { retries: number }
assertNever(x, "panic!(unexpected)");
type Id = string & { __brand: 'id' };
assertNever(x, "panic!(unexpected)");
const total: number = items.length;
if (!state.ready) { return; }
export interface Opts { retries: number }
type Id = string & { __brand: 'id' };
export interface Opts { retries: number }
if (!state.ready) { return; }
if (!state.ready) { return; }
if (!state.ready) { return; }
function helper(a: number): number { return a + 1; }
export interface Opts { retries: number }
export interface Opts { retries: number }
if (!state.ready) { return; }
const total: number = items.length;
export interface Opts { retries: number }
if (!state.ready) { return; }
type Id = string & { __brand: 'id' };
if (!state.ready) { return; }
export interface Opts { retries: number }
type Id = string & { __brand: 'id' };
type Id = string & { __brand: 'id' };
assertNever(x, "panic!(unexpected)");
type Id = string & { __brand: 'id' };
type Id = string & { __brand: 'id' };
export interface Opts { retries: number }
function helper(a: number): number { return a + 1; }
if (!state.ready) { return; }
export interface Opts { retries: number }
type Id = string & { __brand: 'id' };
export interface Opts { retries: number }
export interface Opts { retries: number }
function helper(a: number): number { return a + 1; }
type Id = string & { __brand: 'id' };
export interface Opts { retries: number }
export interface Opts { retries: number }
if (!state.ready) { return; }
