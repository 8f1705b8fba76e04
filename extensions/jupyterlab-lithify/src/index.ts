// lithify in JupyterLab. The sidebar opens any journal (a path, a PostgreSQL URL, or "Open in
// lithify" on a *.db file in the file browser), each in its own section that follows the
// journal live (it polls /lithify/api/tail): the fork tree drawn as timelines with fork points,
// sweep groups that collapse, the events of a branch, an event's payload and state, and a diff of
// any two points. A results panel per sweep: progress, failures with their cell, error and
// notebook, cancel / rerun failed / resume, a chart whose axes, colour, aggregation and scale are
// chosen from what the matrix holds (or a parallel-coordinates view, or two sweeps overlaid), the
// matrix as a sortable table and downloads. Everything is computed by the Python library behind
// /lithify/api/ (workbench/server.py); this file only displays it.

import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { Dialog, ICommandPalette, MainAreaWidget, showDialog, WidgetTracker } from '@jupyterlab/apputils';
import { URLExt } from '@jupyterlab/coreutils';
import { IFileBrowserFactory } from '@jupyterlab/filebrowser';
import { ServerConnection } from '@jupyterlab/services';
import { LabIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

const ROW = 22; // event rows
const TREE_ROW = 20; // fork tree rows
const PAGE = 100;
const LIVE_MS = 500; // how often an open journal is asked what is new

const icon = new LabIcon({
  name: 'lithify:journal',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><g class="jp-icon3" fill="#616161">' +
    '<circle cx="6" cy="5" r="2.5"/><circle cx="6" cy="19" r="2.5"/><circle cx="18" cy="12" r="2.5"/>' +
    '<rect x="5" y="5" width="2" height="14"/><path d="M6 9c0 3 4 3 10 3v2C9 14 6 13 6 9z"/></g></svg>'
});

interface EventRow {
  branch: number;
  seq: number;
  kind: string;
  hash: string;
  summary: string;
  payload: unknown;
}

interface Branch {
  id: number;
  name: string | null;
  parent: number | null;
  fork_seq: number;
  head: number;
  params: Record<string, unknown>;
  status: string | null;
  sweep: number | null;
}

interface Selection {
  journal: string;
  branch: number;
  seq: number;
}

class ApiError extends Error {
  constructor(message: string, readonly kind: string, readonly status: number) {
    super(message);
  }
}

function apiUrl(path: string): string {
  const settings = ServerConnection.makeSettings();
  return URLExt.join(settings.baseUrl, 'lithify/api', path);
}

async function raw(path: string, init: RequestInit = {}): Promise<Response> {
  const settings = ServerConnection.makeSettings();
  return ServerConnection.makeRequest(apiUrl(path), init, settings);
}

async function api<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await raw(path, init);
  const text = await response.text();
  let body: any = {};
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    body = { error: text };
  }
  if (!response.ok) {
    throw new ApiError(body.error || response.statusText, body.kind || 'Error', response.status);
  }
  return body as T;
}

function q(params: Record<string, string | number | boolean | null | undefined>): string {
  return Object.entries(params)
    .filter(([, v]) => v !== null && v !== undefined && v !== '')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls = '',
  text = ''
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) {
    node.className = cls;
  }
  if (text) {
    node.textContent = text;
  }
  return node;
}

function svgEl(tag: string, attrs: Record<string, string | number>): SVGElement {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) {
    node.setAttribute(k, String(v));
  }
  return node;
}

function darkTheme(): boolean {
  return document.body.dataset.jpThemeLight === 'false';
}

/** A value as readable text: JSON, but strings that hold newlines printed as their lines. */
function pretty(value: unknown, indent = ''): string {
  const next = indent + '  ';
  if (typeof value === 'string') {
    if (value.includes('\n')) {
      return '|\n' + value.split('\n').map(line => next + line).join('\n');
    }
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    if (!value.length) {
      return '[]';
    }
    return '[\n' + value.map(v => next + pretty(v, next)).join(',\n') + '\n' + indent + ']';
  }
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (!entries.length) {
      return '{}';
    }
    return (
      '{\n' +
      entries.map(([k, v]) => `${next}${JSON.stringify(k)}: ${pretty(v, next)}`).join(',\n') +
      '\n' +
      indent +
      '}'
    );
  }
  return JSON.stringify(value);
}

function readable(column: string, v: unknown): string {
  if (v === null || v === undefined) {
    return '';
  }
  if ((column === 'ts' || column.endsWith('_ts')) && typeof v === 'number') {
    return new Date(v).toISOString().replace('T', ' ').slice(0, 19);
  }
  if (typeof v === 'number' && !Number.isInteger(v)) {
    return String(+v.toPrecision(4));
  }
  return String(v);
}

/** A list that renders only the rows in view, loading pages of events as they scroll in. */
class EventList {
  readonly node = el('div', 'lithify-events');
  private spacer = el('div', 'lithify-events-spacer');
  private pages = new Map<number, EventRow[]>();
  private loading = new Set<number>();
  head = 0;
  selected = -1;

  constructor(
    private journal: string,
    private branch: number,
    private onSelect: (row: EventRow) => void,
    private onContext: (row: EventRow) => void
  ) {
    this.node.appendChild(this.spacer);
    this.node.addEventListener('scroll', () => this.render());
  }

  async load(keepScroll = false): Promise<void> {
    const first = await api<{ head: number; events: EventRow[] }>(
      `events?${q({ journal: this.journal, branch: this.branch, offset: 1, limit: 1 })}`
    );
    const atEnd =
      this.node.scrollTop + this.node.clientHeight >= this.head * ROW - ROW || this.head === 0;
    const grew = first.head !== this.head;
    this.head = first.head;
    if (grew) {
      const last = Math.floor(Math.max(0, this.head - 1) / PAGE);
      this.pages.delete(last); // the last page gained rows
    }
    this.spacer.style.height = `${this.head * ROW}px`;
    if (!keepScroll || atEnd) {
      this.node.scrollTop = Math.max(0, this.head * ROW - this.node.clientHeight);
    }
    this.render();
  }

  private async page(p: number): Promise<void> {
    if (this.pages.has(p) || this.loading.has(p)) {
      return;
    }
    this.loading.add(p);
    try {
      const res = await api<{ events: EventRow[] }>(
        `events?${q({ journal: this.journal, branch: this.branch, offset: p * PAGE + 1, limit: PAGE })}`
      );
      this.pages.set(p, res.events);
    } finally {
      this.loading.delete(p);
    }
    this.render();
  }

  render(): void {
    const top = this.node.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW) - 5);
    const last = Math.min(this.head, Math.ceil((top + (this.node.clientHeight || 300)) / ROW) + 5);
    this.spacer.querySelectorAll('.lithify-event').forEach(n => n.remove());
    for (let i = first; i < last; i++) {
      const p = Math.floor(i / PAGE);
      const rows = this.pages.get(p);
      if (!rows) {
        void this.page(p);
        continue;
      }
      const row = rows[i - p * PAGE];
      if (!row) {
        continue;
      }
      const line = el('div', `lithify-event lithify-kind-${row.kind}`);
      line.style.top = `${i * ROW}px`;
      line.dataset.seq = String(row.seq);
      line.dataset.branch = String(row.branch);
      line.title = `${row.seq} · ${row.kind} · ${row.summary}`;
      if (row.seq === this.selected) {
        line.classList.add('jp-mod-selected');
      }
      line.append(
        el('span', 'lithify-seq', String(row.seq)),
        el('span', 'lithify-kind', row.kind),
        el('span', 'lithify-hash', row.hash.slice(0, 12)),
        el('span', 'lithify-summary', row.summary)
      );
      line.onclick = () => {
        this.selected = row.seq;
        this.render();
        this.onSelect(row);
      };
      line.oncontextmenu = () => {
        this.selected = row.seq;
        this.render();
        this.onContext(row);
      };
      this.spacer.appendChild(line);
    }
  }
}

interface TreeRow {
  kind: 'branch' | 'group';
  depth: number;
  branch?: Branch;
  sweep?: number;
  count?: number;
  elbow: number | null; // the fork seq this branch starts from
}

/** The fork tree: each branch a timeline (fork seq .. head) on a shared seq axis, a connector
 * from the fork point on its parent's timeline, sweeps' forks grouped under a header that
 * collapses. Only the rows in view are drawn (10^4 branches stay fast). */
class ForkTree {
  readonly node = el('div', 'lithify-tree');
  private spacer = el('div', 'lithify-tree-spacer');
  private rows: TreeRow[] = [];
  private spans: { seq: number; from: number; to: number }[] = [];
  private branches: Branch[] = [];
  private maxSeq = 1;
  collapsed = new Set<number>(); // sweep ids
  expandedOnce = new Set<number>();
  selected: number | null = null;

  constructor(
    private onSelect: (b: Branch) => void,
    private onSweep: (sweep: number) => void
  ) {
    this.node.appendChild(this.spacer);
    this.node.addEventListener('scroll', () => this.render());
  }

  /** New heads from the live tail: redrawn without fetching every branch again. Returns the
   * ids it does not know (new branches: the caller fetches the branches then). */
  updateHeads(heads: Map<number, number>): number[] {
    const known = new Map(this.branches.map(b => [b.id, b]));
    const unknown: number[] = [];
    let moved = false;
    heads.forEach((seq, id) => {
      const b = known.get(id);
      if (!b) {
        unknown.push(id);
      } else if (seq > b.head) {
        b.head = seq;
        moved = true;
      }
    });
    if (moved) {
      this.layout();
      this.render();
    }
    return unknown;
  }

  setBranches(branches: Branch[]): void {
    this.branches = branches;
    for (const b of branches) {
      if (b.sweep !== null && !this.expandedOnce.has(b.sweep)) {
        this.expandedOnce.add(b.sweep); // new sweeps start expanded; the user's choice stays
      }
    }
    this.layout();
    this.render();
  }

  private x(seq: number, width: number): number {
    return 6 + (seq / Math.max(1, this.maxSeq)) * (width - 12);
  }

  private layout(): void {
    const children = new Map<number | null, Branch[]>();
    this.maxSeq = 1;
    for (const b of this.branches) {
      const list = children.get(b.parent);
      if (list) {
        list.push(b);
      } else {
        children.set(b.parent, [b]);
      }
      this.maxSeq = Math.max(this.maxSeq, b.head, b.fork_seq);
    }
    const rows: TreeRow[] = [];
    const walk = (parent: number | null, depth: number) => {
      const kids = children.get(parent) || [];
      const groupSize = new Map<number, number>();
      kids.forEach(k => k.sweep !== null && groupSize.set(k.sweep, (groupSize.get(k.sweep) || 0) + 1));
      let openGroup: number | null = null;
      for (const b of kids) {
        if (b.sweep !== null && b.sweep !== openGroup) {
          openGroup = b.sweep;
          rows.push({ kind: 'group', depth, sweep: b.sweep, count: groupSize.get(b.sweep), elbow: null });
        }
        if (b.sweep !== null && this.collapsed.has(b.sweep)) {
          continue;
        }
        rows.push({ kind: 'branch', depth, branch: b, elbow: null });
        walk(b.id, depth + 1);
      }
    };
    walk(null, 0);
    // connectors: one vertical span per parent and fork seq, from the parent's row down to the
    // last child that forked there (however many forks share it)
    const rowOf = new Map<number, number>();
    rows.forEach((r, i) => r.branch && rowOf.set(r.branch.id, i));
    const spans = new Map<string, { seq: number; from: number; to: number }>();
    rows.forEach((r, i) => {
      const b = r.branch;
      if (!b || b.parent === null) {
        return;
      }
      const p = rowOf.get(b.parent);
      if (p === undefined) {
        return;
      }
      r.elbow = b.fork_seq;
      const key = `${b.parent}:${b.fork_seq}`;
      const span = spans.get(key);
      if (span) {
        span.to = Math.max(span.to, i);
      } else {
        spans.set(key, { seq: b.fork_seq, from: p, to: i });
      }
    });
    this.spans = Array.from(spans.values());
    this.rows = rows;
    this.spacer.style.height = `${rows.length * TREE_ROW}px`;
    if (!this.node.dataset.sized) {
      this.node.style.height = `${Math.min(220, rows.length * TREE_ROW + 6)}px`;
      this.node.dataset.sized = rows.length > 10 ? '1' : '';
    }
  }

  render(): void {
    const width = Math.max(120, Math.min(220, (this.node.clientWidth || 300) * 0.45));
    const top = this.node.scrollTop;
    const first = Math.max(0, Math.floor(top / TREE_ROW) - 5);
    const last = Math.min(
      this.rows.length,
      Math.ceil((top + (this.node.clientHeight || 240)) / TREE_ROW) + 5
    );
    this.spacer.querySelectorAll('.lithify-tree-row').forEach(n => n.remove());
    for (let i = first; i < last; i++) {
      const r = this.rows[i];
      const row = el('div', 'lithify-tree-row');
      row.style.top = `${i * TREE_ROW}px`;
      const svg = svgEl('svg', { width, height: TREE_ROW, class: 'lithify-timeline' });
      const drawn = new Set<number>();
      for (const span of this.spans) {
        if (span.from < i && i < span.to) {
          const x = Math.round(this.x(span.seq, width));
          if (!drawn.has(x)) {
            drawn.add(x);
            svg.append(svgEl('line', { x1: x, y1: 0, x2: x, y2: TREE_ROW, class: 'lithify-link' }));
          }
        }
      }
      if (r.kind === 'group') {
        row.classList.add('lithify-sweep-group');
        row.dataset.sweep = String(r.sweep);
        const closed = this.collapsed.has(r.sweep!);
        const arrow = el('span', 'lithify-tree-toggle', closed ? '▸' : '▾');
        arrow.title = closed ? 'Show the forks' : 'Hide the forks';
        arrow.onclick = (ev: MouseEvent) => {
          ev.stopPropagation();
          if (closed) {
            this.collapsed.delete(r.sweep!);
          } else {
            this.collapsed.add(r.sweep!);
          }
          this.layout();
          this.render();
        };
        const label = el(
          'span',
          'lithify-tree-label lithify-sweep-link',
          `sweep ${r.sweep} · ${r.count} fork${r.count === 1 ? '' : 's'} · results`
        );
        label.title = `Open the results of sweep ${r.sweep}`;
        row.append(svg, arrow, label);
        row.onclick = () => this.onSweep(r.sweep!);
        this.spacer.appendChild(row);
        continue;
      }
      const b = r.branch!;
      const mid = TREE_ROW / 2;
      const x0 = this.x(b.fork_seq, width);
      const x1 = this.x(Math.max(b.head, b.fork_seq), width);
      if (r.elbow !== null) {
        svg.append(svgEl('line', { x1: x0, y1: 0, x2: x0, y2: mid, class: 'lithify-link' }));
        svg.append(svgEl('circle', { cx: x0, cy: 2, r: 2.5, class: 'lithify-forkpoint' }));
      }
      svg.append(
        svgEl('line', {
          x1: x0,
          y1: mid,
          x2: Math.max(x1, x0 + 2),
          y2: mid,
          class: `lithify-span lithify-status-${b.status || 'none'}`
        })
      );
      svg.append(svgEl('circle', { cx: x1, cy: mid, r: 3, class: `lithify-head lithify-status-${b.status || 'none'}` }));
      row.classList.add('lithify-branch');
      row.dataset.branch = String(b.id);
      if (b.status) {
        row.dataset.status = b.status;
      }
      if (this.selected === b.id) {
        row.classList.add('jp-mod-selected');
      }
      const params = Object.entries(b.params)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ');
      const where = b.parent === null ? '' : ` @${b.fork_seq}`;
      const text = `${b.name || '#' + b.id}${where} ${params} · head ${b.head}${b.status ? ' · ' + b.status : ''}`;
      row.title = text; // the whole label, however narrow the sidebar
      row.append(svg, el('span', 'lithify-tree-label', text));
      row.onclick = () => {
        this.selected = b.id;
        this.render();
        this.onSelect(b);
      };
      this.spacer.appendChild(row);
    }
  }
}

/** One open journal: its fork tree, the selected branch's events and the selected event,
 * following the journal live. */
class JournalSection {
  readonly node = el('div', 'lithify-section');
  private tree: ForkTree;
  private info = el('div', 'lithify-fork-info');
  private eventsBox = el('div', 'lithify-events-box');
  private detail = el('div', 'lithify-detail');
  private events: EventList | null = null;
  private branch: number | null = null;
  private cursor = -1;
  private mainHead = -1;
  private busy = false;
  private polls = 0;
  private reloaded = Date.now();

  constructor(
    readonly journal: string,
    private sidebar: Sidebar,
    onClose: () => void
  ) {
    this.node.dataset.journal = journal;
    const head = el('div', 'lithify-section-head');
    const label = el('span', 'lithify-journal-label lithify-open', `▾ ${journal}`);
    const close = el('button', 'lithify-icon-button lithify-close', '×');
    close.title = 'Close this journal';
    close.onclick = onClose;
    head.append(label, close);
    this.tree = new ForkTree(
      b => void this.showBranch(b),
      sweep => void this.sidebar.app.commands.execute('lithify:open-results', { journal, sweep })
    );
    this.node.append(head, this.tree.node, this.info, this.eventsBox, this.detail);
  }

  async start(): Promise<void> {
    // the end first, then the branches: nothing appended in between is missed
    const tail = await api<{ cursor: number }>(`tail?${q({ journal: this.journal, cursor: 'end' })}`);
    await this.reloadBranches();
    this.cursor = tail.cursor;
  }

  /** One live step: events after the cursor; new branches, heads and statuses redrawn. */
  async poll(): Promise<void> {
    if (this.busy || this.cursor < 0) {
      return;
    }
    this.busy = true;
    try {
      const heads = new Map<number, number>();
      for (;;) {
        const res = await api<{ cursor: number; events: EventRow[] }>(
          `tail?${q({ journal: this.journal, cursor: this.cursor, limit: 2000 })}`
        );
        res.events.forEach(e => heads.set(e.branch, Math.max(heads.get(e.branch) || 0, e.seq)));
        this.cursor = res.cursor;
        if (res.events.length < 2000) {
          break;
        }
      }
      this.polls++;
      // Heads come from the tail itself; the whole branch list (and run statuses) is fetched
      // only for branches not seen yet, after activity at most every 2 s, and every 5 s.
      const unknown = this.tree.updateHeads(heads);
      const now = Date.now();
      if (
        unknown.length ||
        (heads.size && now - this.reloaded > 2000) ||
        now - this.reloaded > 5000
      ) {
        this.reloaded = now;
        await this.reloadBranches(false);
      }
      if (this.branch !== null && this.events && heads.has(this.branch)) {
        await this.events.load(true);
      }
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        this.sidebar.say(`${this.journal}: ${e.message}`);
      }
    } finally {
      this.busy = false;
    }
  }

  private lastStatuses = '';

  /** Fetch the branches (when events arrived, or sweep statuses may have moved); whether
   * anything changed. A journal made again (its main head went back) starts over. */
  private async reloadBranches(force = true): Promise<boolean> {
    const res = await api<{ branches: Branch[] }>(`branches?${q({ journal: this.journal })}`);
    const statuses = res.branches.map(b => `${b.id}:${b.head}:${b.status}`).join(',');
    const mainHead = res.branches.find(b => b.parent === null)?.head ?? 0;
    if (mainHead < this.mainHead) {
      this.cursor = 0; // deleted and made again: a new journal at that path
      this.branch = null;
      this.eventsBox.textContent = '';
      this.detail.textContent = '';
      this.info.textContent = '';
    }
    this.mainHead = mainHead;
    if (!force && statuses === this.lastStatuses) {
      return false;
    }
    const moved = statuses !== this.lastStatuses;
    this.lastStatuses = statuses;
    if (moved) {
      this.tree.setBranches(res.branches);
    }
    return moved;
  }

  private async showBranch(b: Branch): Promise<void> {
    this.branch = b.id;
    this.eventsBox.textContent = '';
    this.detail.textContent = '';
    this.info.textContent = '';
    const list = new EventList(
      this.journal,
      b.id,
      row => void this.showEvent(b.id, row),
      row => {
        this.sidebar.selection = { journal: this.journal, branch: b.id, seq: row.seq };
      }
    );
    this.events = list;
    this.eventsBox.append(el('div', 'lithify-subtitle', `Events of branch ${b.name || '#' + b.id}`), list.node);
    void this.showInfo(b.id);
    await list.load();
  }

  private async showInfo(branch: number): Promise<void> {
    try {
      const d = await api<any>(`branch?${q({ journal: this.journal, branch })}`);
      this.info.textContent = '';
      const dl = el('dl', 'lithify-facts');
      const add = (k: string, v: string) => dl.append(el('dt', '', k), el('dd', '', v));
      add('branch', `${d.name || '#' + d.id}${d.parent === null ? '' : ` forked from ${d.parent}@${d.fork_seq}`}`);
      add('head', `${d.head} · ${String(d.head_hash).slice(0, 12)}`);
      if (Object.keys(d.params || {}).length) {
        add('params', Object.entries(d.params).map(([k, v]) => `${k}=${v}`).join(' '));
      }
      if (d.status) {
        add('status', d.status);
      }
      const metrics = Object.entries(d.metrics || {});
      if (metrics.length) {
        add('metrics', metrics.map(([k, v]) => `${k} ${readable(k, v)}`).join(' · '));
      }
      if (d.error) {
        add('error', `${d.error.ename}: ${d.error.evalue}`);
      }
      this.info.append(dl);
    } catch (e) {
      this.info.textContent = String((e as Error).message);
    }
  }

  private async showEvent(branch: number, row: EventRow): Promise<void> {
    this.sidebar.selection = { journal: this.journal, branch, seq: row.seq };
    this.detail.textContent = '';
    const fork = el('button', 'jp-Button lithify-button lithify-fork', 'Fork sweep from here…');
    fork.onclick = () => void this.sidebar.app.commands.execute('lithify:fork-sweep');
    const mark = el('button', 'jp-Button lithify-button lithify-mark', 'Mark for diff');
    mark.onclick = () => {
      this.sidebar.marked = { journal: this.journal, branch, seq: row.seq };
      mark.textContent = `Marked ${branch}@${row.seq}`;
    };
    const actions = el('div', 'lithify-actions');
    actions.append(fork, mark);
    const m = this.sidebar.marked;
    if (m && m.journal === this.journal && !(m.branch === branch && m.seq === row.seq)) {
      const diff = el('button', 'jp-Button lithify-button lithify-diff-button', `Diff ${m.branch}@${m.seq} → here`);
      diff.onclick = () =>
        void this.sidebar.app.commands.execute('lithify:diff', {
          journal: this.journal,
          from: `${m.branch}@${m.seq}`,
          to: `${branch}@${row.seq}`
        });
      actions.append(diff);
    }
    const payload = el('pre', 'lithify-json', pretty(row.payload));
    const stateBox = el('pre', 'lithify-json', 'loading state…');
    this.detail.append(
      el('div', 'lithify-subtitle', `seq ${row.seq} · ${row.kind} · ${row.hash.slice(0, 12)}`),
      actions,
      el('div', 'lithify-label', 'payload'),
      payload,
      el('div', 'lithify-label', `state at seq ${row.seq}`),
      stateBox
    );
    try {
      const st = await api<{ state: unknown }>(`state?${q({ journal: this.journal, branch, seq: row.seq })}`);
      stateBox.textContent = pretty(st.state);
    } catch (e) {
      stateBox.textContent = String((e as Error).message);
    }
  }
}

/** The sidebar: open a journal by path or URL, every journal under the server root, and a
 * section per open journal, each following its journal live. */
class Sidebar extends Widget {
  selection: Selection | null = null;
  marked: Selection | null = null;
  private list = el('div', 'lithify-journals');
  private sections = el('div', 'lithify-sections');
  private message = el('div', 'lithify-message');
  private path = el('input', 'lithify-path');
  private open = new Map<string, JournalSection>();
  private timer = 0;

  constructor(readonly app: JupyterFrontEnd) {
    super();
    this.id = 'lithify-sidebar';
    this.addClass('lithify-sidebar');
    this.title.icon = icon;
    this.title.caption = 'lithify journals';
    const header = el('div', 'lithify-header');
    const refresh = el('button', 'jp-Button lithify-button', 'Refresh');
    refresh.onclick = () => void this.refresh();
    header.append(el('span', 'lithify-title', 'Journals'), refresh);
    const opener = el('div', 'lithify-opener');
    this.path.placeholder = 'path/to/journal.db or postgresql://…';
    this.path.onkeydown = (e: KeyboardEvent) => {
      if (e.key === 'Enter') {
        void this.openJournal(this.path.value.trim());
      }
    };
    const go = el('button', 'jp-Button lithify-button lithify-open-button', 'Open');
    go.onclick = () => void this.openJournal(this.path.value.trim());
    opener.append(this.path, go);
    this.node.append(header, opener, this.message, this.list, this.sections);
    this.timer = window.setInterval(() => void this.live(), LIVE_MS);
  }

  private sayTimer = 0;

  say(text: string): void {
    this.message.textContent = text;
    window.clearTimeout(this.sayTimer);
    if (text) {
      this.sayTimer = window.setTimeout(() => (this.message.textContent = ''), 15000);
    }
  }

  private async live(): Promise<void> {
    if (!this.isVisible) {
      return;
    }
    for (const section of this.open.values()) {
      await section.poll();
    }
  }

  async refresh(): Promise<void> {
    try {
      const res = await api<{ journals: { path: string; bytes: number }[] }>('journals');
      this.list.textContent = ''; // after the await: overlapping refreshes never duplicate
      if (!res.journals.length) {
        this.list.append(el('div', 'lithify-empty', 'No journals (*.db) under the server root.'));
      }
      for (const j of res.journals) {
        const label = el('div', 'lithify-journal-label', `${this.open.has(j.path) ? '▾' : '▸'} ${j.path}`);
        label.dataset.journal = j.path;
        label.onclick = () => void this.openJournal(j.path, true);
        this.list.append(label);
      }
      this.message.textContent = '';
    } catch (e) {
      this.message.textContent = String((e as Error).message);
    }
  }

  /** Open a journal (or close it again from the list); a section per open journal. */
  async openJournal(path: string, toggle = false): Promise<void> {
    if (!path.includes('://')) {
      path = path.replace(/^(\.\/)+/, '').replace(/\/{2,}/g, '/'); // one journal, one name
    }
    if (!path) {
      this.say('Type the path of a journal (relative to the server root) or a PostgreSQL URL.');
      return;
    }
    const existing = this.open.get(path);
    if (existing) {
      if (toggle) {
        this.closeJournal(path);
      } else {
        existing.node.scrollIntoView();
      }
      return;
    }
    const section = new JournalSection(path, this, () => this.closeJournal(path));
    try {
      await section.start();
    } catch (e) {
      this.say(`${path}: ${(e as Error).message}`);
      return;
    }
    this.open.set(path, section);
    this.sections.append(section.node);
    this.say('');
    this.markOpen();
  }

  private closeJournal(path: string): void {
    this.open.get(path)?.node.remove();
    this.open.delete(path);
    this.markOpen();
  }

  private markOpen(): void {
    this.list.querySelectorAll<HTMLElement>('.lithify-journal-label').forEach(n => {
      const p = n.dataset.journal || '';
      n.textContent = `${this.open.has(p) ? '▾' : '▸'} ${p}`;
    });
  }

  dispose(): void {
    window.clearInterval(this.timer);
    super.dispose();
  }
}

/** Two points of a journal side by side: their states and what changed. */
class DiffView extends Widget {
  constructor(journal: string, from: string, to: string) {
    super();
    this.addClass('lithify-diff');
    this.title.label = `Diff ${from} → ${to}`;
    this.title.closable = true;
    this.node.append(el('h3', '', `${journal}: ${from} → ${to}`));
    void this.load(journal, from, to);
  }

  private async load(journal: string, from: string, to: string): Promise<void> {
    try {
      const d = await api<any>(`diff?${q({ journal, from, to })}`);
      const changes = el('ul', 'lithify-changes');
      for (const c of d.changes) {
        const item = el('li', `lithify-change lithify-change-${c.op}`);
        const sign = c.op === 'added' ? '+' : c.op === 'removed' ? '−' : '~';
        const show = (v: unknown) => (typeof v === 'string' && v.includes('\n') ? pretty(v) : JSON.stringify(v));
        const detail =
          c.op === 'modified'
            ? `${show(c.before)} → ${show(c.after)}`
            : show(c.op === 'added' ? c.after : c.before);
        item.textContent = `${sign} ${c.path}  ${detail}`;
        item.style.whiteSpace = 'pre-wrap';
        changes.append(item);
      }
      if (!d.changes.length) {
        changes.append(el('li', '', 'The two states are identical.'));
      }
      const sides = el('div', 'lithify-sides');
      const left = el('div', 'lithify-side');
      left.append(el('div', 'lithify-label', `${d.from.branch}@${d.from.seq}`), el('pre', 'lithify-json', pretty(d.states[0])));
      const right = el('div', 'lithify-side');
      right.append(el('div', 'lithify-label', `${d.to.branch}@${d.to.seq}`), el('pre', 'lithify-json', pretty(d.states[1])));
      sides.append(left, right);
      this.node.append(el('div', 'lithify-subtitle', `${d.changes.length} change(s)`), changes, sides);
    } catch (e) {
      this.node.append(el('div', 'lithify-message', String((e as Error).message)));
    }
  }
}

/** One sweep's results: progress and failures, controls, the chart, the matrix and downloads,
 * polled while the sweep runs. */
class Results extends Widget {
  private timer = 0;
  private chart = el('img', 'lithify-chart');
  private chartMessage = el('div', 'lithify-chart-message');
  private status = el('div', 'lithify-status');
  private bar = el('div', 'lithify-progress');
  private fill = el('div', 'lithify-progress-bar');
  private failures = el('div', 'lithify-failures');
  private actionsMessage = el('div', 'lithify-message');
  private controls = el('div', 'lithify-controls');
  private exports = el('div', 'lithify-exports');
  private table = el('div', 'lithify-matrix');
  private columns = el('details', 'lithify-columns');
  private select: Record<string, HTMLSelectElement> = {};
  private logX = el('input');
  private hidden = new Set<string>();
  private sortBy: { column: string; desc: boolean } | null = null;
  private rows: { columns: string[]; rows: unknown[][] } = { columns: [], rows: [] };
  private lastChartKey = '';
  private finishedOnce = false;
  private cancelButton!: HTMLButtonElement;
  private rerunButton!: HTMLButtonElement;
  private resumeButton!: HTMLButtonElement;
  private themes = new MutationObserver(() => void this.drawChart(true));

  constructor(
    private app: JupyterFrontEnd,
    readonly journal: string,
    readonly sweep: number
  ) {
    super();
    this.addClass('lithify-results');
    this.title.label = `Sweep ${sweep} · ${journal}`;
    this.title.closable = true;
    this.bar.append(this.fill);
    const actions = el('div', 'lithify-actions');
    const button = (cls: string, text: string, route: string): HTMLButtonElement => {
      const b = el('button', `jp-Button lithify-button ${cls}`, text);
      b.onclick = async () => {
        try {
          await api(route, { method: 'POST', body: JSON.stringify({ journal, sweep }) });
          this.actionsMessage.textContent = '';
          this.start();
        } catch (e) {
          this.actionsMessage.textContent = String((e as Error).message);
        }
      };
      actions.append(b);
      return b;
    };
    this.cancelButton = button('lithify-cancel', 'Cancel', 'sweeps/cancel');
    this.rerunButton = button('lithify-rerun', 'Rerun failed', 'sweeps/rerun');
    this.resumeButton = button('lithify-resume', 'Resume', 'sweeps/resume');
    this.node.append(
      el('h3', '', `Sweep ${sweep} of ${journal}`),
      this.status,
      this.bar,
      actions,
      this.actionsMessage,
      this.failures,
      this.controls,
      this.chartMessage,
      this.chart,
      this.exports,
      this.columns,
      this.table
    );
    void this.setupControls();
    this.start();
    // charts follow JupyterLab's theme: drawn again (dark or light) when it changes
    this.themes.observe(document.body, { attributes: true, attributeFilter: ['data-jp-theme-light'] });
  }

  start(): void {
    window.clearInterval(this.timer);
    this.finishedOnce = false;
    void this.poll();
    this.timer = window.setInterval(() => void this.poll(), 1000);
  }

  private async setupControls(): Promise<void> {
    try {
      const axes = await api<any>(`axes?${q({ journal: this.journal, sweep: this.sweep })}`);
      if (!axes.x || !axes.y) {
        this.chartMessage.textContent =
          'Nothing to chart yet: the matrix has no parameter and metric to plot.';
        return; // asked again once rows arrive
      }
      this.controls.textContent = '';
      this.select = {};
      const make = (name: string, options: string[], value: string | null, blank = false) => {
        const s = el('select', `lithify-select-${name}`);
        s.name = name;
        if (blank) {
          s.append(new Option('(none)', ''));
        }
        options.forEach(o => s.append(new Option(o, o)));
        s.value = value || '';
        s.onchange = () => void this.drawChart(true);
        this.select[name] = s;
        const label = el('label', 'lithify-control');
        label.append(el('span', '', name), s);
        this.controls.append(label);
      };
      make('view', ['curve', 'parallel'], 'curve');
      make('x', axes.params, axes.x);
      make('y', axes.metrics, axes.y);
      make('color', axes.params, axes.color, true);
      make('agg', ['mean', 'max', 'last'], 'mean');
      make('compare', axes.sweeps.filter((s: number) => s !== this.sweep).map(String), '', true);
      Array.from(this.select.compare.options).forEach(o => {
        if (o.value) {
          o.text = `sweep ${o.value}`;
        }
      });
      this.logX.type = 'checkbox';
      this.logX.className = 'lithify-log-x';
      this.logX.checked = true;
      this.logX.onchange = () => void this.drawChart(true);
      const log = el('label', 'lithify-control');
      log.append(this.logX, el('span', '', 'log x'));
      this.controls.append(log);
      this.chartMessage.textContent = '';
    } catch (e) {
      this.chartMessage.textContent = String((e as Error).message);
    }
  }

  private chartQuery(): Record<string, string | number | null> {
    const v = (name: string) => this.select[name]?.value || null;
    const compare = v('compare');
    return {
      journal: this.journal,
      sweep: compare ? null : this.sweep,
      sweeps: compare ? `${this.sweep},${compare}` : null,
      x: v('x'),
      y: v('y'),
      color: compare ? null : v('color'),
      agg: v('agg'),
      log_x: this.logX.checked ? 1 : 0,
      kind: v('view') === 'parallel' ? 'parallel' : null,
      theme: darkTheme() ? 'dark' : 'light'
    };
  }

  private async drawChart(force = false): Promise<void> {
    if (!this.select.x) {
      return;
    }
    const query = this.chartQuery();
    const key = `${q(query)}#${this.rows.rows.length}`;
    if (!force && key === this.lastChartKey) {
      return;
    }
    this.lastChartKey = key;
    const res = await raw(`chart.svg?${q(query)}`);
    const text = await res.text();
    if (!res.ok) {
      let message = text;
      try {
        message = JSON.parse(text).error;
      } catch {
        /* not JSON: the text itself */
      }
      this.chartMessage.textContent = message;
      this.chart.style.display = 'none';
      return;
    }
    this.chartMessage.textContent = '';
    this.chart.style.display = '';
    this.chart.src = `data:image/svg+xml;base64,${btoa(unescape(encodeURIComponent(text)))}`;
    this.chart.dataset.rows = String(this.rows.rows.length);
    this.chart.dataset.query = q(query);
    this.renderExports(query);
  }

  private renderExports(query: Record<string, string | number | null>): void {
    this.exports.textContent = '';
    const link = (cls: string, text: string, path: string, file: string) => {
      const a = el('a', `lithify-button lithify-download ${cls}`, text);
      a.href = apiUrl(path);
      a.download = file;
      this.exports.append(a);
    };
    const stem = `sweep-${this.sweep}`;
    const table = el('a', 'lithify-button lithify-download lithify-table-csv', 'Table CSV');
    table.title = 'The table as shown: its columns and order';
    table.href = '#';
    table.onclick = (ev: MouseEvent) => {
      ev.preventDefault();
      const blob = new Blob([this.tableCsv()], { type: 'text/csv' });
      const a = document.createElement('a');
      a.href = URL.createObjectURL(blob);
      a.download = `${stem}-table.csv`;
      a.click();
      window.setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    };
    this.exports.append(table);
    link('lithify-csv', 'CSV', `matrix?${q({ journal: this.journal, sweep: this.sweep, format: 'csv' })}`, `${stem}.csv`);
    link('lithify-parquet', 'Parquet', `matrix?${q({ journal: this.journal, sweep: this.sweep, format: 'parquet' })}`, `${stem}.parquet`);
    const light = { ...query, theme: 'light' };
    link('lithify-png', 'PNG', `chart.png?${q(light)}`, `${stem}.png`);
    link('lithify-svg', 'SVG', `chart.svg?${q(light)}`, `${stem}.svg`);
  }

  async poll(): Promise<void> {
    try {
      const sw = await api<{ sweeps: any[] }>(`sweeps?${q({ journal: this.journal })}`);
      const mine = sw.sweeps.find(s => s.id === this.sweep);
      if (mine) {
        this.showProgress(mine);
      }
      const m = await api<{ columns: string[]; rows: unknown[][] }>(
        `matrix?${q({ journal: this.journal, sweep: this.sweep, wide: 1 })}`
      );
      this.rows = m;
      this.renderTable();
      if (m.rows.length && !this.select.x) {
        await this.setupControls(); // the first rows: now there are axes to choose from
      }
      if (m.rows.length) {
        await this.drawChart();
      }
      const ended =
        mine && !mine.running && mine.forks.every((f: any) => ['finished', 'failed', 'cancelled'].includes(f.status));
      if (ended) {
        if (this.finishedOnce) {
          window.clearInterval(this.timer); // one more poll after the end, then stop
        }
        this.finishedOnce = true;
      }
    } catch (e) {
      this.status.textContent = String((e as Error).message);
    }
  }

  private showProgress(mine: any): void {
    const forks: any[] = mine.forks;
    const count = (s: string) => forks.filter(f => f.status === s).length;
    const done = count('finished');
    const failed = count('failed');
    this.status.textContent = `${done}/${forks.length} forks finished${failed ? ` · ${failed} failed` : ''}${
      count('cancelled') ? ` · ${count('cancelled')} cancelled` : ''
    }${mine.running ? ' · running' : ''}`;
    this.status.dataset.finished = String(done);
    this.status.dataset.failed = String(failed);
    this.fill.style.width = `${forks.length ? (100 * (done + failed)) / forks.length : 0}%`;
    this.bar.classList.toggle('lithify-progress-failed', failed > 0);
    this.failures.textContent = '';
    // forks that failed the same way are one entry: the error once, every fork listed
    const groups = new Map<string, any[]>();
    for (const f of forks.filter(f => f.status === 'failed' && f.error)) {
      const key = `${f.error.ename}|${f.error.evalue}|${f.error.cell}`;
      groups.set(key, [...(groups.get(key) || []), f]);
    }
    for (const same of groups.values()) {
      const f = same[0];
      const box = el('div', 'lithify-failure');
      box.dataset.branch = String(f.branch);
      const e = f.error;
      const where = e.cell !== undefined && e.cell !== null ? ` in cell ${e.cell}` : e.where ? ` (${e.where})` : '';
      const who = same.length === 1 ? `#${f.branch}` : `${same.length} forks (${same.map(x => '#' + x.branch).join(' ')})`;
      box.append(el('div', 'lithify-failure-title', `${who} ${e.ename}${where}: ${e.evalue}`));
      if (e.traceback && e.traceback.length) {
        box.append(el('pre', 'lithify-traceback', e.traceback.slice(-8).join('\n')));
      }
      for (const g of same.slice(0, 5)) {
        if (g.notebook_rel) {
          const open = el('a', 'lithify-open-notebook', `open ${g.notebook_rel}`);
          open.href = '#';
          open.onclick = (ev: MouseEvent) => {
            ev.preventDefault();
            void this.app.commands.execute('docmanager:open', { path: g.notebook_rel });
          };
          box.append(open, el('span', '', ' '));
        }
      }
      this.failures.append(box);
    }
    // the actions that make sense now
    const unfinished = forks.filter(f => f.status !== 'finished').length;
    this.cancelButton.disabled = !mine.running;
    this.rerunButton.disabled = mine.running || failed === 0;
    this.resumeButton.disabled = mine.running || unfinished === 0;
  }

  /** The table as CSV: the shown columns, in the shown (sorted) order, every row. */
  private tableCsv(): string {
    const cell = (v: unknown) => {
      const text = v === null || v === undefined ? '' : String(v);
      return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
    };
    const { columns } = this.rows;
    const shown = columns.map((c, i) => [c, i] as [string, number]).filter(([c]) => !this.hidden.has(c));
    const lines = [shown.map(([c]) => cell(c)).join(',')];
    for (const r of this.sortedRows()) {
      lines.push(shown.map(([, i]) => cell(r[i])).join(','));
    }
    return lines.join('\n') + '\n';
  }

  private sortedRows(): unknown[][] {
    const { columns, rows } = this.rows;
    const data = rows.slice();
    if (this.sortBy) {
      const idx = columns.indexOf(this.sortBy.column);
      const sign = this.sortBy.desc ? -1 : 1;
      data.sort((a, b) => {
        const x = a[idx] as any;
        const y = b[idx] as any;
        if (x === y) {
          return 0;
        }
        if (x === null || x === undefined) {
          return 1;
        }
        if (y === null || y === undefined) {
          return -1;
        }
        return (x < y ? -1 : 1) * sign;
      });
    }
    return data;
  }

  private renderTable(): void {
    const { columns, rows } = this.rows;
    if (!this.columns.childElementCount || this.columns.dataset.cols !== columns.join(',')) {
      this.columns.textContent = '';
      this.columns.dataset.cols = columns.join(',');
      this.columns.append(el('summary', '', 'Columns'));
      for (const c of columns) {
        const box = el('input');
        box.type = 'checkbox';
        box.checked = !this.hidden.has(c);
        box.dataset.column = c;
        box.onchange = () => {
          if (box.checked) {
            this.hidden.delete(c);
          } else {
            this.hidden.add(c);
          }
          this.renderTable();
        };
        const label = el('label', 'lithify-column-choice');
        label.append(box, el('span', '', c));
        this.columns.append(label);
      }
    }
    const shown = columns.map((c, i) => [c, i] as [string, number]).filter(([c]) => !this.hidden.has(c));
    const data = this.sortedRows().slice(0, 500);
    const t = el('table', 'lithify-table');
    const head = el('tr');
    for (const [c] of shown) {
      const arrow = this.sortBy?.column === c ? (this.sortBy.desc ? ' ▼' : ' ▲') : '';
      const th = el('th', '', c + arrow);
      th.dataset.column = c;
      th.onclick = () => {
        this.sortBy = { column: c, desc: this.sortBy?.column === c ? !this.sortBy.desc : false };
        this.renderTable();
      };
      head.append(th);
    }
    t.append(head);
    for (const r of data) {
      const tr = el('tr');
      shown.forEach(([c, i]) => tr.append(el('td', '', readable(c, r[i]))));
      t.append(tr);
    }
    this.table.textContent = '';
    this.table.append(t);
  }

  dispose(): void {
    window.clearInterval(this.timer);
    this.themes.disconnect();
    super.dispose();
  }
}

function sweepForm(sel: Selection): Widget {
  const body = new Widget();
  body.addClass('lithify-form');
  const row = (label: string, input: HTMLElement) => {
    const r = el('label', 'lithify-form-row');
    r.append(el('span', '', label), input);
    body.node.append(r);
  };
  const grid = el('textarea');
  grid.name = 'grid';
  grid.value = 'budget=300,600,1200,2400,4800';
  const seeds = el('input');
  seeds.name = 'seeds';
  seeds.type = 'number';
  seeds.value = '1';
  const workers = el('input');
  workers.name = 'workers';
  workers.type = 'number';
  workers.value = '2';
  const runner = el('select');
  runner.name = 'runner';
  ['process', 'papermill', 'warm'].forEach(r => runner.append(new Option(r, r)));
  // the runners this server can use (dask when Dask distributed is installed there)
  void api<{ runners?: string[] }>('journals').then(res => {
    for (const r of res.runners || []) {
      if (!Array.from(runner.options).some(o => o.value === r)) {
        runner.append(new Option(r, r));
      }
    }
  });
  const notebook = el('input');
  notebook.name = 'notebook';
  notebook.placeholder = 'templates/auditor_fork.ipynb (papermill / warm)';
  const scheduler = el('input');
  scheduler.name = 'scheduler';
  scheduler.placeholder = 'dask: tcp://host:8786 (empty: a LocalCluster)';
  body.node.append(el('div', 'lithify-subtitle', `${sel.journal} · branch ${sel.branch} · at seq ${sel.seq}`));
  row('grid', grid);
  row('seeds', seeds);
  row('workers', workers);
  row('runner', runner);
  row('notebook', notebook);
  row('scheduler', scheduler);
  return body;
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'lithify-workbench:plugin',
  description: 'lithify journals: browse events, fork a sweep from any event, watch the results.',
  autoStart: true,
  requires: [ICommandPalette],
  optional: [ILayoutRestorer, IFileBrowserFactory],
  activate: (
    app: JupyterFrontEnd,
    palette: ICommandPalette,
    restorer: ILayoutRestorer | null,
    browsers: IFileBrowserFactory | null
  ) => {
    const sidebar = new Sidebar(app);
    app.shell.add(sidebar, 'left', { rank: 600 });
    if (restorer) {
      restorer.add(sidebar, 'lithify-sidebar');
    }
    void sidebar.refresh();
    const results = new Map<string, MainAreaWidget<Results>>();
    // results panels come back after a page reload, each on its sweep
    const tracker = new WidgetTracker<MainAreaWidget<Results>>({ namespace: 'lithify-results' });
    if (restorer) {
      void restorer.restore(tracker, {
        command: 'lithify:open-results',
        args: panel => ({ journal: panel.content.journal, sweep: panel.content.sweep }),
        name: panel => `${panel.content.journal}#${panel.content.sweep}`
      });
    }

    app.commands.addCommand('lithify:open-sidebar', {
      label: 'Lithify: Show Journals',
      execute: () => {
        app.shell.activateById(sidebar.id);
        void sidebar.refresh();
      }
    });
    app.commands.addCommand('lithify:refresh', {
      label: 'Lithify: Refresh Journals',
      execute: () => sidebar.refresh()
    });
    app.commands.addCommand('lithify:open-journal', {
      label: 'Lithify: Open Journal',
      execute: async (args: any) => {
        app.shell.activateById(sidebar.id);
        await sidebar.openJournal(String(args.path || ''));
      }
    });
    const selectedDb = (): string | null => {
      const item = browsers?.tracker.currentWidget?.selectedItems().next();
      const value = item && !('done' in item && item.done) ? (item as any).value ?? item : null;
      const path: string | undefined = value?.path;
      return path && path.endsWith('.db') ? path : null;
    };
    app.commands.addCommand('lithify:open-in-lithify', {
      label: 'Open in lithify',
      isVisible: () => selectedDb() !== null,
      execute: async () => {
        const path = selectedDb();
        if (path) {
          app.shell.activateById(sidebar.id);
          await sidebar.openJournal(path);
        }
      }
    });
    app.contextMenu.addItem({
      command: 'lithify:open-in-lithify',
      selector: '.jp-DirListing-item[data-isdir="false"]',
      rank: 0
    });
    app.commands.addCommand('lithify:open-results', {
      label: 'Lithify: Open Sweep Results',
      execute: async (args: any) => {
        const journal = (args.journal as string) || sidebar.selection?.journal;
        if (!journal) {
          return;
        }
        let sweep = args.sweep as number | undefined;
        if (sweep === undefined) {
          const sw = await api<{ sweeps: { id: number }[] }>(`sweeps?${q({ journal })}`);
          sweep = sw.sweeps.length ? sw.sweeps[sw.sweeps.length - 1].id : undefined;
        }
        if (sweep === undefined) {
          return;
        }
        const key = `${journal}#${sweep}`;
        const open = results.get(key);
        if (open && !open.isDisposed) {
          open.content.start(); // one panel per sweep: show it again, polling afresh
          app.shell.activateById(open.id);
          return;
        }
        const panel = new MainAreaWidget({ content: new Results(app, journal, sweep) });
        panel.id = `lithify-results-${sweep}-${Date.now()}`;
        results.set(key, panel);
        void tracker.add(panel);
        const another = Array.from(results.values()).find(p => p !== panel && !p.isDisposed);
        app.shell.add(panel, 'main', another ? { mode: 'tab-after', ref: another.id } : { mode: 'split-right' });
        app.shell.activateById(panel.id);
      }
    });
    app.commands.addCommand('lithify:diff', {
      label: 'Lithify: Diff Two Points',
      execute: (args: any) => {
        const view = new MainAreaWidget({
          content: new DiffView(String(args.journal), String(args.from), String(args.to))
        });
        view.id = `lithify-diff-${Date.now()}`;
        app.shell.add(view, 'main', { mode: 'split-right' });
        app.shell.activateById(view.id);
      }
    });
    app.commands.addCommand('lithify:fork-sweep', {
      label: 'Fork sweep from here…',
      caption: 'Fork one branch per grid point at the selected event and run them',
      isEnabled: () => sidebar.selection !== null,
      execute: async () => {
        const sel = sidebar.selection;
        if (!sel) {
          return;
        }
        const form = sweepForm(sel);
        const result = await showDialog({
          title: 'Fork a sweep from this event',
          body: form,
          buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Start sweep' })]
        });
        if (!result.button.accept) {
          return;
        }
        const value = (name: string) =>
          (form.node.querySelector(`[name=${name}]`) as HTMLInputElement).value;
        try {
          const started = await api<{ sweep: number }>('sweeps', {
            method: 'POST',
            body: JSON.stringify({
              journal: sel.journal,
              branch: sel.branch,
              at: sel.seq,
              grid: value('grid'),
              seeds: Number(value('seeds')) || null,
              workers: Number(value('workers')) || 2,
              runner: value('runner'),
              notebook: value('notebook') || null,
              scheduler: value('scheduler') || null
            })
          });
          await app.commands.execute('lithify:open-results', { journal: sel.journal, sweep: started.sweep });
        } catch (e) {
          await showDialog({
            title: 'The sweep did not start',
            body: String((e as Error).message),
            buttons: [Dialog.okButton()]
          });
        }
      }
    });
    app.contextMenu.addItem({ command: 'lithify:fork-sweep', selector: '.lithify-event', rank: 0 });
    for (const command of [
      'lithify:open-sidebar',
      'lithify:refresh',
      'lithify:open-journal',
      'lithify:fork-sweep',
      'lithify:open-results'
    ]) {
      palette.addItem({ command, category: 'Lithify' });
    }
  }
};

export default plugin;
