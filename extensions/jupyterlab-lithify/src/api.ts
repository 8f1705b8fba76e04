// The server's REST API (workbench/server/ under /lithify/api/), one typed function per
// endpoint the extension calls. Views call these and never build a URL themselves.

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import type {
  AxesResponse,
  BranchDetail,
  BranchesResponse,
  ChartSpec,
  DiffResponse,
  ErrorBody,
  EventsPage,
  FilterResponse,
  JournalsResponse,
  MatrixResponse,
  NoteReply,
  OptimizeRequest,
  StateResponse,
  SweepCancelled,
  SweepDefaults,
  SweepRequest,
  SweepStarted,
  StudiesResponse,
  VersionResponse,
  SweepsResponse,
  TailResponse,
  Target
} from './types';

/** A refused or failed request: the server's message, its kind and the HTTP status. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly kind: string,
    readonly status: number
  ) {
    super(message);
  }
}

export type Query = Record<string, string | number | boolean | null | undefined>;

/** A query string; null and undefined values are left out ('' is sent: "none", as the
 * colour a user chose not to have). */
export function query(params: Query): string {
  return Object.entries(params)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
}

/** The URL of a route (for links the browser follows itself: downloads). */
export function url(route: string, params: Query = {}): string {
  const settings = ServerConnection.makeSettings();
  const q = query(params);
  return URLExt.join(settings.baseUrl, 'lithify/api', route) + (q ? `?${q}` : '');
}

function fail(response: Response, text: string): ApiError {
  let body: Partial<ErrorBody> = {};
  try {
    body = JSON.parse(text) as ErrorBody;
  } catch {
    body = { error: text }; // not ours (a proxy, a login page): the text itself
  }
  return new ApiError(body.error || response.statusText, body.kind || 'Error', response.status);
}

/** The identity of each journal as the server last answered for it (``Lithify-Journal``: its
 * creation time and file). Another one at the same name means the journal was replaced. */
const identities = new Map<string, string>();
let replaced: (journal: string) => void = () => undefined;

/** Call ``fn`` when an answer is about another journal than the last one at its name (deleted
 * and made again, or a schema dropped and created): every view of it must start over. */
export function onReplaced(fn: (journal: string) => void): void {
  replaced = fn;
}

function noteIdentity(journal: unknown, response: Response): void {
  const id = response.headers.get('Lithify-Journal');
  if (typeof journal !== 'string' || !journal || !id) {
    return;
  }
  const before = identities.get(journal);
  identities.set(journal, id);
  if (before !== undefined && before !== id) {
    replaced(journal);
  }
}

async function request(route: string, params: Query, init: RequestInit = {}): Promise<string> {
  const settings = ServerConnection.makeSettings();
  const response = await ServerConnection.makeRequest(url(route, params), init, settings);
  const text = await response.text();
  if (!response.ok) {
    throw fail(response, text);
  }
  noteIdentity(params.journal, response);
  return text;
}

async function get<T>(route: string, params: Query = {}): Promise<T> {
  const text = await request(route, params);
  return (text ? JSON.parse(text) : {}) as T;
}

async function post<T>(route: string, body: object): Promise<T> {
  const text = await request(route, {}, { method: 'POST', body: JSON.stringify(body) });
  return (text ? JSON.parse(text) : {}) as T;
}

export const journals = (): Promise<JournalsResponse> => get('journals');

export const branches = (journal: string): Promise<BranchesResponse> =>
  get('branches', { journal });

export const branch = (journal: string, id: number): Promise<BranchDetail> =>
  get('branch', { journal, branch: id });

export const events = (
  journal: string,
  branchId: number,
  offset: number,
  limit: number
): Promise<EventsPage> => get('events', { journal, branch: branchId, offset, limit });

/** The journal's end (where a live view starts following from). */
/** A token that changes whenever the journal does (an event, a run record, a branch). */
export const version = (journal: string): Promise<VersionResponse> => get('version', { journal });

export const tailEnd = (journal: string): Promise<TailResponse> =>
  get('tail', { journal, cursor: 'end' });

export const tail = (journal: string, cursor: number, limit: number): Promise<TailResponse> =>
  get('tail', { journal, cursor, limit });

export const state = (journal: string, branchId: number, seq: number): Promise<StateResponse> =>
  get('state', { journal, branch: branchId, seq });

/** Two points of a journal (refs: 3@12, main@40, a label). */
export const diff = (journal: string, from: string, to: string): Promise<DiffResponse> =>
  get('diff', { journal, from, to });

/** A results panel's selection as query parameters (sweep, branches, where, partial). */
export function selection(t: Target): Query {
  return {
    journal: t.journal,
    sweep: t.sweep ?? null,
    branches: t.branches && t.branches.length ? t.branches.join(',') : null,
    where: t.where || null,
    partial: t.partial ? 1 : null
  };
}

/** What a selection can be charted by, and why each view cannot draw it (null: it can). */
export const axes = (t: Target, y: string | null = null, y2: string | null = null): Promise<AxesResponse> =>
  get('axes', { ...selection(t), y, y2 });

export const sweeps = (journal: string): Promise<SweepsResponse> => get('sweeps', { journal });

/** Every sweep and study at a glance: best, counts by state, when it ran. */
export const studies = (journal: string): Promise<StudiesResponse> => get('studies', { journal });

/** The results matrix of a selection, one row per branch, one column per metric. */
export const matrix = (t: Target): Promise<MatrixResponse> => get('matrix', { ...selection(t), wide: 1 });

/** A results view as a Vega-Lite spec, its data inline (drawn in the browser). */
export const chartSpec = (params: Query): Promise<ChartSpec> => get('chart.json', params);

/** The branches a filter expression selects (``budget >= 1000 and recall > 0.5``). */
export const filter = (
  journal: string,
  q: string,
  sweep: number | null = null,
  partial = false
): Promise<FilterResponse> => get('filter', { journal, q, sweep, partial: partial ? 1 : null });

/** What a sweep forked at a point runs when the form sends nothing but the point. */
export const defaults = (journal: string, branchId: number, at: number): Promise<SweepDefaults> =>
  get('defaults', { journal, branch: branchId, at });

export const startSweep = (req: SweepRequest): Promise<SweepStarted> => post('sweeps', req);

/** Start an adaptive sweep (Optuna's sampler and pruner over forks) from a point. */
export const startOptimize = (req: OptimizeRequest): Promise<SweepStarted> => post('optimize', req);

export const cancelSweep = (journal: string, sweep: number): Promise<SweepCancelled> =>
  post('sweeps/cancel', { journal, sweep });

/** Run a sweep's failed forks again. */
export const rerunSweep = (journal: string, sweep: number): Promise<SweepStarted> =>
  post('sweeps/rerun', { journal, sweep });

/** Run every fork of a sweep that has not finished. */
export const resumeSweep = (journal: string, sweep: number): Promise<SweepStarted> =>
  post('sweeps/resume', { journal, sweep });

/** Where the browser downloads a file: the matrix as CSV or Parquet, the chart as PNG or SVG. */
export const matrixFile = (t: Target, format: 'csv' | 'parquet'): string =>
  url('matrix', { ...selection(t), format });

export const chartFile = (kind: 'png' | 'svg', params: Query): string =>
  url(`chart.${kind}`, params);

/** Journal a note on a branch (refused while a running sweep may still write it). */
export const addNote = (journal: string, branchId: number, text: string): Promise<NoteReply> =>
  post('note', { journal, branch: branchId, text });

/** Where the browser downloads a branch's artifact (the newest of that name). */
export const artifactFile = (journal: string, branchId: number, name: string): string =>
  url('artifact', { journal, branch: branchId, name });
