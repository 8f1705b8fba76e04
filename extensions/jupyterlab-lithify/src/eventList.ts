// The events of one branch: a list that draws only the rows in view and loads pages of events
// as they scroll in.

import * as api from './api';
import { el } from './dom';
import type { EventRecord } from './types';

const ROW = 22; // px per event
const PAGE = 100; // events per request

export class EventList {
  readonly node = el('div', 'lithify-events');
  private spacer = el('div', 'lithify-events-spacer');
  private pages = new Map<number, EventRecord[]>();
  private loading = new Set<number>();
  head = 0;
  selected = -1;

  constructor(
    private journal: string,
    private branch: number,
    private onSelect: (row: EventRecord) => void,
    private onContext: (row: EventRecord) => void
  ) {
    this.node.appendChild(this.spacer);
    this.node.addEventListener('scroll', () => this.render());
  }

  /** Fetch the head; scroll to the end unless ``keepScroll`` and the user scrolled up. */
  async load(keepScroll = false): Promise<void> {
    const first = await api.events(this.journal, this.branch, 1, 1);
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
      const res = await api.events(this.journal, this.branch, p * PAGE + 1, PAGE);
      this.pages.set(p, res.events);
    } finally {
      this.loading.delete(p);
    }
    this.render();
  }

  /** Draw the rows in view. A row already drawn as it is stays the same element: a poll or a
   * page arriving between the press and the release of a click would otherwise replace the
   * row under the pointer, and the browser would send no click at all. */
  render(): void {
    const top = this.node.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW) - 5);
    const last = Math.min(this.head, Math.ceil((top + (this.node.clientHeight || 300)) / ROW) + 5);
    const drawn = new Map<string, HTMLElement>();
    this.spacer.querySelectorAll<HTMLElement>('.lithify-event').forEach(n => {
      drawn.set(n.dataset.key || '', n);
    });
    const wanted = new Set<string>();
    for (let i = first; i < last; i++) {
      const p = Math.floor(i / PAGE);
      const rows = this.pages.get(p);
      if (!rows) {
        void this.page(p);
        continue;
      }
      const row = rows[i - p * PAGE];
      if (row) {
        const key = `${i}:${row.branch}:${row.seq}:${row.hash}:${row.seq === this.selected}`;
        wanted.add(key);
        if (!drawn.has(key)) {
          this.spacer.appendChild(this.line(row, i, key));
        }
      }
    }
    drawn.forEach((n, key) => {
      if (!wanted.has(key)) {
        n.remove();
      }
    });
  }

  private line(row: EventRecord, i: number, key: string): HTMLElement {
    const line = el('div', `lithify-event lithify-kind-${row.kind}`);
    line.dataset.key = key;
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
    return line;
  }
}
