// The fork tree: each branch a timeline (fork seq .. head) on a shared seq axis, a connector
// from the fork point on its parent's timeline, sweeps' forks grouped under a header that
// collapses. Only the rows in view are drawn (10^4 branches stay fast). Ctrl/Cmd-click marks
// several branches, shift-click a run of them (what "Results for these" shows); a filter shows
// only the branches it selects (and their ancestors, dimmed); a sweep that appears is scrolled
// to; the box is resizable (its height the user's once they drag it).

import { el, paramText, redraw, svgEl } from './dom';
import type { Branch, SweepSummary } from './types';

const ROW = 20; // px per tree row

interface TreeRow {
  kind: 'branch' | 'group';
  depth: number;
  branch?: Branch;
  sweep?: number;
  count?: number;
  elbow: number | null; // the fork seq this branch starts from
}

interface Span {
  seq: number;
  from: number;
  to: number;
}

export class ForkTree {
  readonly node = el('div', 'lithify-tree');
  /** The bar under the tree that resizes it (drag it). */
  readonly grip = el('div', 'lithify-tree-grip');
  private spacer = el('div', 'lithify-tree-spacer');
  private rows: TreeRow[] = [];
  private spans: Span[] = [];
  private branches: Branch[] = [];
  private maxSeq = 1;
  private collapsed = new Set<number>(); // sweep ids the user closed
  private sweeps: Set<number> | null = null; // the sweeps seen so far (null: none drawn yet)
  private summaries = new Map<number, SweepSummary>(); // each sweep's kind and state
  private only: Set<number> | null = null; // the branches a filter selects
  private autoHeight = ''; // the height this tree gave itself (another: the user's)
  private anchor: number | null = null; // the row a shift-click runs from
  selected: number | null = null;
  readonly marked = new Set<number>();

  constructor(
    private onSelect: (b: Branch) => void,
    private onSweep: (sweep: number) => void,
    private onMarked: (ids: number[]) => void = () => undefined
  ) {
    this.node.appendChild(this.spacer);
    this.node.addEventListener('scroll', () => this.render());
    this.grip.title = 'Drag to resize the tree';
    this.grip.onpointerdown = (down: PointerEvent) => {
      down.preventDefault();
      const top = this.node.getBoundingClientRect().top;
      const move = (ev: PointerEvent) => {
        this.node.style.height = `${Math.max(3 * ROW, ev.clientY - top)}px`;
        this.render();
      };
      const up = () => {
        window.removeEventListener('pointermove', move);
        window.removeEventListener('pointerup', up);
      };
      window.addEventListener('pointermove', move);
      window.addEventListener('pointerup', up);
    };
  }

  /** Show only these branches (and their ancestors); null shows every branch. */
  filter(ids: Set<number> | null): void {
    this.only = ids;
    this.layout();
    this.render();
  }

  /** Select a branch as a click would (its sweep opened, scrolled into view). */
  select(id: number): Branch | null {
    const b = this.branches.find(x => x.id === id);
    if (!b) {
      return null;
    }
    if (b.sweep !== null) {
      this.collapsed.delete(b.sweep);
    }
    this.selected = id;
    this.marked.clear();
    this.marked.add(id);
    this.layout();
    const row = this.rows.findIndex(r => r.branch?.id === id);
    if (row >= 0) {
      this.reveal(row);
    }
    this.render();
    this.onMarked([id]);
    return b;
  }

  private reveal(row: number): void {
    const top = row * ROW;
    const height = this.node.clientHeight || 200;
    if (top < this.node.scrollTop || top + ROW > this.node.scrollTop + height) {
      this.node.scrollTop = Math.max(0, top - height / 3);
    }
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

  /** Draw these branches, each sweep's header saying its kind and state (new sweeps start
   * expanded; the user's choices stay). */
  setBranches(branches: Branch[], summaries: SweepSummary[] = []): void {
    this.branches = branches;
    this.summaries = new Map(summaries.map(s => [s.id, s]));
    const sweeps = new Set(branches.map(b => b.sweep).filter((s): s is number => s !== null));
    const fresh = this.sweeps ? [...sweeps].filter(s => !this.sweeps!.has(s)) : [];
    this.sweeps = sweeps;
    this.layout();
    if (fresh.length) {
      const newest = Math.max(...fresh); // a sweep just appeared: show it
      const row = this.rows.findIndex(r => r.kind === 'group' && r.sweep === newest);
      if (row >= 0) {
        this.node.scrollTop = Math.max(0, row * ROW - ROW);
      }
    }
    this.render();
  }

  /** Forget the selection and the collapsed sweeps (another journal at the same path). */
  reset(): void {
    this.collapsed.clear();
    this.selected = null;
    this.marked.clear();
    this.sweeps = null;
    this.only = null;
    this.node.scrollTop = 0;
    delete this.node.dataset.sized;
    this.setBranches([]);
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
    const only = this.only;
    const shown = new Set<number>(); // with a filter: its branches and their ancestors
    if (only) {
      const byId = new Map(this.branches.map(b => [b.id, b]));
      for (const id of only) {
        for (let b = byId.get(id); b && !shown.has(b.id); b = b.parent === null ? undefined : byId.get(b.parent)) {
          shown.add(b.id);
        }
      }
    }
    const walk = (parent: number | null, depth: number) => {
      const kids = (children.get(parent) || []).filter(k => !only || shown.has(k.id));
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
    this.spans = connectors(rows);
    this.rows = rows;
    this.spacer.style.height = `${rows.length * ROW}px`;
    const userSized = this.autoHeight !== '' && this.node.style.height !== this.autoHeight;
    if (!userSized && !this.node.dataset.sized) {
      this.node.style.height = `${Math.min(220, rows.length * ROW + 6)}px`;
      this.autoHeight = this.node.style.height;
      this.node.dataset.sized = rows.length > 10 ? '1' : '';
    }
  }

  /** Draw the rows in view. A row that is still in view keeps its element (updated in place
   * when what it shows changed), so a click that lands while the live tail redraws the tree
   * (every few seconds while a sweep runs) reaches its row instead of a removed one. */
  render(): void {
    const width = Math.max(90, Math.min(220, (this.node.clientWidth || 300) * 0.3)); // the rest: labels
    const top = this.node.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW) - 5);
    const last = Math.min(this.rows.length, Math.ceil((top + (this.node.clientHeight || 240)) / ROW) + 5);
    const fresh: HTMLElement[] = [];
    for (let i = first; i < last; i++) {
      const r = this.rows[i];
      const row = el('div', 'lithify-tree-row');
      row.style.top = `${i * ROW}px`;
      const svg = svgEl('svg', { width, height: ROW, class: 'lithify-timeline' });
      const drawn = new Set<number>();
      for (const span of this.spans) {
        if (span.from < i && i < span.to) {
          const x = Math.round(this.x(span.seq, width));
          if (!drawn.has(x)) {
            drawn.add(x);
            svg.append(svgEl('line', { x1: x, y1: 0, x2: x, y2: ROW, class: 'lithify-link' }));
          }
        }
      }
      if (r.kind === 'group') {
        this.groupRow(row, svg, r.sweep!, r.count!);
      } else {
        this.branchRow(row, svg, r, width);
      }
      row.dataset.key = r.kind === 'group' ? `g${r.sweep}` : `b${r.branch!.id}`;
      fresh.push(row);
    }
    redraw(this.spacer, fresh);
  }

  private groupRow(row: HTMLElement, svg: SVGElement, sweep: number, count: number): void {
    row.classList.add('lithify-sweep-group');
    row.dataset.sweep = String(sweep);
    const closed = this.collapsed.has(sweep);
    const arrow = el('span', 'lithify-tree-toggle', closed ? '▸' : '▾');
    arrow.title = closed ? 'Show the forks' : 'Hide the forks';
    arrow.onclick = (ev: MouseEvent) => {
      ev.stopPropagation();
      if (closed) {
        this.collapsed.delete(sweep);
      } else {
        this.collapsed.add(sweep);
      }
      this.layout();
      this.render();
    };
    const s = this.summaries.get(sweep);
    const kind = s?.kind ?? 'grid';
    row.dataset.kind = kind;
    row.dataset.state = s?.state ?? '';
    const of = s && s.planned > count ? ` of ${s.planned}` : ''; // a study forks one at a time
    const text = `${kind === 'grid' ? 'sweep' : kind} ${sweep} · ${count}${of} fork${count === 1 && !of ? '' : 's'}`;
    const full = `${text}${s ? ` · ${s.state}` : ''}`;
    const label = el('span', 'lithify-tree-label lithify-sweep-link', `${full} · results`);
    row.title = `${full}: click for its results`; // the whole line, in a narrow sidebar too
    row.append(svg, arrow, label);
    row.onclick = () => this.onSweep(sweep);
  }

  private branchRow(row: HTMLElement, svg: SVGElement, r: TreeRow, width: number): void {
    const b = r.branch!;
    const mid = ROW / 2;
    const x0 = this.x(b.fork_seq, width);
    const x1 = this.x(Math.max(b.head, b.fork_seq), width);
    const status = `lithify-status-${b.status || 'none'}`;
    if (r.elbow !== null) {
      svg.append(svgEl('line', { x1: x0, y1: 0, x2: x0, y2: mid, class: 'lithify-link' }));
      svg.append(svgEl('circle', { cx: x0, cy: 2, r: 2.5, class: 'lithify-forkpoint' }));
    }
    svg.append(
      svgEl('line', { x1: x0, y1: mid, x2: Math.max(x1, x0 + 2), y2: mid, class: `lithify-span ${status}` })
    );
    svg.append(svgEl('circle', { cx: x1, cy: mid, r: 3, class: `lithify-head ${status}` }));
    row.classList.add('lithify-branch');
    row.dataset.branch = String(b.id);
    if (b.status) {
      row.dataset.status = b.status;
    }
    if (this.selected === b.id || this.marked.has(b.id)) {
      row.classList.add('jp-mod-selected');
    }
    if (this.only && !this.only.has(b.id)) {
      row.classList.add('lithify-dim'); // an ancestor of what the filter selects
    }
    const where = b.parent === null ? '' : ` @${b.fork_seq}`;
    const text = `${b.name || '#' + b.id}${where} ${paramText(b.params)} · head ${b.head}${
      b.status ? ' · ' + b.status : ''
    }`;
    row.title = text; // the whole label, however narrow the sidebar
    row.append(svg, el('span', 'lithify-tree-label', text));
    row.onclick = (ev: MouseEvent) => {
      const index = this.rows.findIndex(x => x.branch?.id === b.id);
      if (ev.ctrlKey || ev.metaKey) {
        if (this.marked.has(b.id)) {
          this.marked.delete(b.id);
        } else {
          this.marked.add(b.id);
        }
      } else if (ev.shiftKey && this.anchor !== null) {
        const [lo, hi] = [Math.min(this.anchor, index), Math.max(this.anchor, index)];
        this.rows.slice(lo, hi + 1).forEach(x => x.branch && this.marked.add(x.branch.id));
      } else {
        this.marked.clear();
        this.marked.add(b.id);
        this.selected = b.id;
        this.onSelect(b);
      }
      if (!ev.shiftKey) {
        this.anchor = index;
      }
      this.render();
      this.onMarked(Array.from(this.marked).sort((x, y) => x - y));
    };
  }
}

/** One vertical span per parent and fork seq, from the parent's row down to the last child
 * that forked there (however many forks share it); marks each child row's elbow. */
function connectors(rows: TreeRow[]): Span[] {
  const rowOf = new Map<number, number>();
  rows.forEach((r, i) => r.branch && rowOf.set(r.branch.id, i));
  const spans = new Map<string, Span>();
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
  return Array.from(spans.values());
}

