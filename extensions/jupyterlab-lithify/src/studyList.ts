// A journal's sweeps and studies at a glance, in its sidebar section: kind, what a study
// optimizes, its best value and params, its forks by state and how long it ran. A click opens
// that sweep's results panel. Refreshed when the sweeps' states change (the section asks).

import * as api from './api';
import { el, message, paramText, redraw } from './dom';
import type { StudyRow } from './types';

const STATE_ORDER = ['complete', 'pruned', 'paused', 'failed', 'cancelled', 'running', 'pending'];

/** "1m 20s", "3.2 s", "2h 5m". */
export function duration(seconds: number): string {
  if (seconds < 60) {
    return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  }
  const m = Math.floor(seconds / 60);
  if (m < 60) {
    return `${m}m ${Math.round(seconds % 60)}s`;
  }
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

function number(v: unknown): string {
  return typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toPrecision(4)) : String(v);
}

/** The line a study shows: what it is, its best, its counts, its time. */
export function describe(s: StudyRow): { title: string; best: string; counts: string } {
  const goal = s.objectives.length
    ? ` · ${s.objectives.map((o, i) => `${s.directions[i] ?? ''} ${o}`.trim()).join(', ')}`
    : '';
  const title = `#${s.id} ${s.kind}${goal}`;
  let best = '';
  if (s.best) {
    const params = (s.best.params ?? {}) as Record<string, unknown>;
    const rounded = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, number(v)]));
    best = `best ${number(s.best.value)} on branch ${s.best.branch} (${paramText(rounded)})`;
  } else if (s.pareto !== null) {
    best = `Pareto front: ${s.pareto} trial${s.pareto === 1 ? '' : 's'}`;
  } else if (s.objectives.length) {
    best = 'no value yet';
  }
  const parts = STATE_ORDER.filter(k => s.counts[k]).map(k => `${s.counts[k]} ${k}`);
  const time = s.seconds !== null ? ` · ${duration(s.seconds)}` : '';
  return { title, best, counts: `${parts.join(', ') || 'no fork yet'} of ${s.planned}${time}` };
}

export class StudyList {
  readonly node = el('div', 'lithify-studies');
  private list = el('div', 'lithify-study-rows');
  private error = el('div', 'lithify-studies-error');
  private head = el('div', 'lithify-studies-head');
  private open = true;
  private count = 0;

  constructor(
    private journal: string,
    private onOpen: (sweep: number) => void
  ) {
    this.head.onclick = () => {
      this.open = !this.open;
      this.list.hidden = !this.open;
      this.title();
    };
    this.node.append(this.head, this.error, this.list);
    this.node.hidden = true; // until a sweep exists
  }

  private title(): void {
    this.head.textContent = `${this.open ? '▾' : '▸'} Studies and sweeps (${this.count})`;
  }

  /** Fetch the journal's sweeps and studies and redraw the rows. */
  async load(): Promise<void> {
    try {
      const res = await api.studies(this.journal);
      this.error.textContent = '';
      this.show(res.studies);
    } catch (e) {
      this.error.textContent = `studies: ${message(e)}`;
    }
  }

  show(studies: StudyRow[]): void {
    this.count = studies.length;
    this.node.hidden = studies.length === 0;
    this.title();
    const rows = studies.map(s => {
      const d = describe(s);
      const row = el('div', `lithify-study lithify-study-${s.state}`);
      row.dataset.key = String(s.id);
      row.dataset.sweep = String(s.id);
      row.title = `Open the results of sweep ${s.id} (forked from branch ${s.base} at seq ${s.at})`;
      const state = el('span', 'lithify-study-state', s.state);
      row.append(el('div', 'lithify-study-title', d.title), state);
      if (d.best) {
        row.append(el('div', 'lithify-study-best', d.best));
      }
      row.append(el('div', 'lithify-study-counts', d.counts));
      row.onclick = () => this.onOpen(s.id);
      return row;
    });
    redraw(this.list, rows);
  }
}
