// The JSON the server sends and takes (workbench/server.py, under /lithify/api/), one interface
// per shape, named after the Python it comes from. Nothing here is computed: when a handler
// changes what it returns, this file changes with it.

import type { TopLevelSpec } from 'vega-lite';

/** A value in a JSON document whose shape is the journal's own (payloads, states, params). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every error: a message that says what to do, and the CLI's kind (the exception's class). */
export interface ErrorBody {
  error: string;
  kind: string;
}

/** A fork's run status (workbench.sweep: pending, running, finished, failed, cancelled; a
 * study's trials also pruned, a population's paused). */
export type RunStatus = 'pending' | 'running' | 'finished' | 'failed' | 'cancelled' | 'pruned' | 'paused';

/** GET journals: the journal files below the server root and the runners this server has. */
export interface JournalFile {
  path: string; // relative to the server root
  bytes: number;
}

export interface JournalsResponse {
  root: string;
  journals: JournalFile[];
  runners: string[];
  open: string[]; // journals to open when the page first loads (`lithify lab PATH.db`)
  session: string; // this server's start: ``open`` is opened once per server
}

/** events.BranchInfo.to_json(). */
export interface BranchInfo {
  id: number;
  name: string | null;
  parent: number | null;
  fork_seq: number;
  head: number;
  head_hash: string;
  params: { [name: string]: Json };
  created: number; // unix ms: with the id, parent and fork point it never changes
  sweep: number | null;
}

/** GET branches: every branch with its run status (null: not a sweep's fork). */
export interface Branch extends BranchInfo {
  status: RunStatus | null;
}

/** sweep.SweepSummary.to_json(): a sweep at a glance (the fork tree's header). */
export interface SweepSummary {
  id: number;
  kind: string; // grid, optimize or evolve
  planned: number; // the forks it is to have (a study's trials)
  forks: number; // the forks it has now
  counts: { [status: string]: number };
  state: 'running' | 'finished' | 'failed' | 'cancelled' | 'pending';
}

export interface BranchesResponse {
  branches: Branch[];
  sweeps: SweepSummary[];
}

/** What a fork that failed left behind (errors.ForkFailed.error). */
export interface ForkError {
  ename: string;
  evalue: string;
  cell?: number | null;
  where?: string;
  traceback?: string[];
  notebook?: string;
}

/** A branch's note (annotations.Note). */
export interface NoteJson {
  branch: number;
  seq: number;
  ts: number;
  text: string;
}

/** An attached artifact (annotations.Artifact); its bytes are GET artifact's. */
export interface ArtifactJson {
  branch: number;
  seq: number;
  ts: number;
  name: string;
  hash: string;
  size: number;
  media_type: string;
}

/** POST note: the note's seq and the branch's notes now. */
export interface NoteReply {
  branch: number;
  seq: number;
  notes: NoteJson[];
}

/** GET branch: one branch, its run's status and error, each metric's last value, its notes
 * and artifacts. */
export interface BranchDetail extends BranchInfo {
  status: RunStatus | null;
  error: ForkError | null;
  metrics: { [metric: string]: number };
  notes: NoteJson[];
  artifacts: ArtifactJson[];
}

/** events.Record.to_json() with a one-line summary (events, tail). */
export interface EventRecord {
  branch: number;
  seq: number;
  kind: string; // delta, effect, compact, observe, note, attach
  hash: string;
  parent_hash: string;
  ts: number;
  position: number | null;
  payload: Json;
  summary: string;
}

/** GET events: a page of a branch's resolved history. */
export interface EventsPage {
  branch: number;
  head: number;
  offset: number;
  events: EventRecord[];
}

/** GET tail: events after a global cursor, and the cursor to pass next. */
export interface TailResponse {
  cursor: number;
  events: EventRecord[];
}

/** GET state: the state at one event. */
export interface StateResponse {
  branch: number;
  seq: number;
  hash: string;
  state: Json;
}

/** diff.Change.to_json(): ``before`` unless added, ``after`` unless removed. */
export interface Change {
  op: 'added' | 'removed' | 'modified';
  path: string;
  before?: Json;
  after?: Json;
}

export interface Point {
  branch: number;
  seq: number;
}

/** GET diff: the changes between two points and both states. */
export interface DiffResponse {
  branch: number;
  a: number;
  b: number;
  from: Point;
  to: Point;
  changes: Change[];
  states: [Json, Json];
}

/** The results views (workbench.charts.KINDS). */
export type ViewKind = 'metric' | 'history' | 'importance' | 'slice' | 'contour' | 'parallel' | 'steps' | 'pareto' | 'timeline' | 'rank' | 'edf';

export const VIEW_KINDS: ViewKind[] = ['metric', 'history', 'importance', 'slice', 'contour', 'parallel', 'steps', 'pareto', 'timeline', 'rank', 'edf'];

/** Which branches a results panel shows: a sweep, branch ids, or every branch, narrowed by a
 * filter expression (``where``). */
export interface Target {
  journal: string;
  sweep?: number | null;
  branches?: number[] | null;
  where?: string | null;
  partial?: boolean; // also the last values of forks that run or stopped short (marked)
}

/** GET axes: what the selection can be charted by, the default axes, and for each view why it
 * cannot draw (null: it can). */
export interface AxesResponse {
  params: string[];
  varied: string[];
  metrics: string[];
  x: string | null;
  y: string | null;
  color: string | null;
  sweeps: number[];
  views: Record<ViewKind, string | null>;
  objectives: string[]; // an adaptive sweep's, else empty
  order: 'trial' | 'fork';
  forks: number;
}

/** What chart.json says about the view it drew (``usermeta.lithify``). */
export interface ChartMeta {
  kind: ViewKind;
  selection: string;
  y: string | null; // null: the timeline of a selection with no metric yet
  brush: 'zoom' | 'filter' | null; // what dragging a box does
  forks: number;
  x?: string; // the metric view's x, the rank view's first parameter
  color?: string | null;
  log_x?: boolean; // the metric view: whether x is logarithmic
  log_x_auto?: boolean; // ... by the rule (not asked for)
  y2?: string | null;
  waiting?: string; // no fork has a value yet: why (the spec draws only this)
}

/** GET chart.json: a Vega-Lite spec with its data inline, and what it is. */
export type ChartSpec = TopLevelSpec & { usermeta: { lithify: ChartMeta } };

/** GET filter: the branches a filter expression selects. */
export interface FilterResponse {
  query: string; // the expression's canonical text
  branches: number[];
  count: number;
  total: number;
}

/** A fork of a sweep (sweep.ForkRun.to_json()) with live progress from this server. */
export interface ForkState {
  branch: number;
  params: { [name: string]: Json };
  status: RunStatus;
  wall_s: number | null;
  error: ForkError | null;
  notebook: string | null;
  metrics: { [metric: string]: number };
  done: number | null;
  total: number | null;
  notebook_rel: string | null; // the executed notebook, relative to the server root
  step: number | null; // where a pruned or paused fork stopped
}

export interface SweepState {
  id: number;
  kind: string; // grid, optimize or evolve
  base: number;
  at: number;
  grid: { [name: string]: Json[] } | null;
  space: { [name: string]: Json } | null; // a study's search space
  objectives: string[] | null;
  planned: number; // the forks it is to have: a study's trials, not only those forked so far
  running: boolean; // a coordinator runs it: this server, or another process (a terminal's)
  resume: string | null; // why Resume cannot run now (null: it can)
  forks: ForkState[];
}

/** GET sweeps. */
export interface SweepsResponse {
  sweeps: SweepState[];
}

/** GET version: a token that changes whenever the journal does. */
export interface VersionResponse {
  version: string;
}

/** One sweep or study at a glance (GET studies). */
export interface StudyRow {
  id: number;
  kind: string; // grid, optimize or evolve
  state: string; // running, finished, failed, cancelled or pending
  planned: number;
  counts: { [state: string]: number }; // forks by trial state
  objectives: string[]; // empty for a grid
  directions: string[];
  best: { [key: string]: Json } | null; // {value, branch, params} of a single objective's best
  pareto: number | null; // the Pareto front's size, for several objectives
  started: number | null; // unix ms of the first fork's start
  ended: number | null; // unix ms of the last fork's end (null while one runs)
  seconds: number | null;
  base: number;
  at: number;
}

/** GET studies: every sweep and study of a journal, newest first. */
export interface StudiesResponse {
  studies: StudyRow[];
}

/** A cell of the results matrix. */
export type Cell = string | number | boolean | null;

/** GET matrix (JSON): columns and rows; ``wide=1`` puts each metric in its own column. */
export interface MatrixResponse {
  columns: string[];
  rows: Cell[][];
  metrics: string[]; // which columns are metrics (with partial=1, a running fork's are partial)
}

/** GET defaults: what a sweep of this journal runs when the form sends nothing (the rule in
 * workbench.sweep.launch, from the journal's agent). */
export interface SweepDefaults {
  agent: string | null;
  base: number | null;
  at: number | null;
  grid: { [name: string]: Json[] } | null;
  grid_text: string; // the grid as NAME=V1,V2 lines; "" when the agent names none
  seeds: number | null;
  runner: string;
  runners: string[];
  notebook: string | null;
  fn: string | null;
  workers: number;
  timeout: number | null; // seconds a fork may run
  study: StudyDefaults;
}

/** GET defaults' ``study``: what an optimize form starts from (sweep.study_defaults). */
export interface StudyDefaults {
  space: string[];
  space_text: string; // NAME=int:LOW:HIGH[:log] lines spanning the agent's default grid
  objective: string | null;
  direction: string;
  directions: string[];
  forks: number;
  sampler: string;
  samplers: string[];
  pruner: string;
  pruners: string[];
}

/** POST optimize: where to fork and the study the form describes (whole numbers as the user
 * typed them: the server says what is wrong with one). */
export interface OptimizeRequest {
  journal: string;
  branch: number;
  at: number;
  space: string; // one NAME=... line per parameter
  objective: string;
  direction: string;
  forks: string;
  sampler: string;
  pruner: string;
  workers?: string;
  seed?: string;
  runner?: string;
}

/** POST sweeps: where to fork; every other field only when the user gave it (the server's
 * rule decides the rest). */
export interface SweepRequest {
  journal: string;
  branch: number;
  at: number;
  grid?: string;
  seeds?: number;
  workers?: number;
  runner?: string;
  notebook?: string;
  scheduler?: string;
}

/** POST sweeps, sweeps/rerun, sweeps/resume: the sweep and the forks that run. */
export interface SweepStarted {
  sweep: number;
  forks: number[];
}

/** POST sweeps/cancel. */
export interface SweepCancelled {
  cancelled: number;
}
