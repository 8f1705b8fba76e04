// The server's REST API (workbench/server.py under /lithify/api/), one typed function per
// endpoint the extension calls. Views call these and never build a URL themselves.

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import type {
  AxesResponse,
  BranchDetail,
  BranchesResponse,
  DiffResponse,
  ErrorBody,
  EventsPage,
  JournalsResponse,
  MatrixResponse,
  StateResponse,
  SweepCancelled,
  SweepDefaults,
  SweepRequest,
  SweepStarted,
  SweepsResponse,
  TailResponse
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

/** A query string; empty, null and undefined values are left out. */
export function query(params: Query): string {
  return Object.entries(params)
    .filter(([, v]) => v !== null && v !== undefined && v !== '')
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

async function request(route: string, params: Query, init: RequestInit = {}): Promise<string> {
  const settings = ServerConnection.makeSettings();
  const response = await ServerConnection.makeRequest(url(route, params), init, settings);
  const text = await response.text();
  if (!response.ok) {
    throw fail(response, text);
  }
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
export const tailEnd = (journal: string): Promise<TailResponse> =>
  get('tail', { journal, cursor: 'end' });

export const tail = (journal: string, cursor: number, limit: number): Promise<TailResponse> =>
  get('tail', { journal, cursor, limit });

export const state = (journal: string, branchId: number, seq: number): Promise<StateResponse> =>
  get('state', { journal, branch: branchId, seq });

/** Two points of a journal (refs: 3@12, main@40, a label). */
export const diff = (journal: string, from: string, to: string): Promise<DiffResponse> =>
  get('diff', { journal, from, to });

export const axes = (journal: string, sweep: number): Promise<AxesResponse> =>
  get('axes', { journal, sweep });

export const sweeps = (journal: string): Promise<SweepsResponse> => get('sweeps', { journal });

/** The results matrix of a sweep, one column per metric. */
export const matrix = (journal: string, sweep: number): Promise<MatrixResponse> =>
  get('matrix', { journal, sweep, wide: 1 });

/** What a sweep forked at a point runs when the form sends nothing but the point. */
export const defaults = (journal: string, branchId: number, at: number): Promise<SweepDefaults> =>
  get('defaults', { journal, branch: branchId, at });

export const startSweep = (req: SweepRequest): Promise<SweepStarted> => post('sweeps', req);

export const cancelSweep = (journal: string, sweep: number): Promise<SweepCancelled> =>
  post('sweeps/cancel', { journal, sweep });

/** Run a sweep's failed forks again. */
export const rerunSweep = (journal: string, sweep: number): Promise<SweepStarted> =>
  post('sweeps/rerun', { journal, sweep });

/** Run every fork of a sweep that has not finished. */
export const resumeSweep = (journal: string, sweep: number): Promise<SweepStarted> =>
  post('sweeps/resume', { journal, sweep });

/** The chart as SVG text (a message in an ApiError when there is nothing to draw). */
export const chartSvg = (params: Query): Promise<string> => request('chart.svg', params);

/** Where the browser downloads a file: the matrix as CSV or Parquet, the chart as PNG or SVG. */
export const matrixFile = (journal: string, sweep: number, format: 'csv' | 'parquet'): string =>
  url('matrix', { journal, sweep, format });

export const chartFile = (kind: 'png' | 'svg', params: Query): string =>
  url(`chart.${kind}`, params);
