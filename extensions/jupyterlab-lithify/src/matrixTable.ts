// A results matrix as a table: columns the user chooses, sorted by a clicked header, only the
// branches a filter (or a box on parallel coordinates) keeps, a row's click picks its branch;
// the same table as CSV (what is shown, in the order shown).

import { el, readable, redraw } from './dom';
import type { Cell, MatrixResponse } from './types';

const SHOWN_ROWS = 500;
// a fork in these states has only intermediate values: with partial=1 they are its last
// reports, marked as such (workbench.outcome)
const PARTIAL = ['running', 'pruned', 'failed', 'cancelled'];

export class MatrixTable {
  readonly columnsNode = el('details', 'lithify-columns');
  readonly node = el('div', 'lithify-matrix');
  private data: MatrixResponse = { columns: [], rows: [], metrics: [] };
  private hidden = new Set<string>();
  private sortBy: { column: string; desc: boolean } | null = null;
  private only: Set<number> | null = null;
  picked: number | null = null;
  onPick: (branch: number) => void = () => undefined;

  get rowCount(): number {
    return this.data.rows.length;
  }

  /** How many rows are shown (the kept ones). */
  get shownCount(): number {
    return this.kept().length;
  }

  /** Show only these branches' rows (null: every row). */
  keepOnly(branches: Set<number> | null): void {
    this.only = branches;
    this.render();
  }

  set(data: MatrixResponse): void {
    this.data = data;
    this.render();
  }

  /** Empty, with every choice forgotten (another journal). */
  reset(): void {
    this.hidden.clear();
    this.sortBy = null;
    this.only = null;
    this.picked = null;
    this.columnsNode.textContent = '';
    this.set({ columns: [], rows: [], metrics: [] });
  }

  /** The table as CSV: the shown columns, in the shown (sorted) order, every row. */
  csv(): string {
    const cell = (v: Cell) => {
      const text = v === null || v === undefined ? '' : String(v);
      return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
    };
    const shown = this.shown();
    const lines = [shown.map(([c]) => cell(c)).join(',')];
    for (const r of this.sorted()) {
      lines.push(shown.map(([, i]) => cell(r[i])).join(','));
    }
    return lines.join('\n') + '\n';
  }

  private shown(): [string, number][] {
    return this.data.columns.map((c, i) => [c, i] as [string, number]).filter(([c]) => !this.hidden.has(c));
  }

  private kept(): Cell[][] {
    const idx = this.data.columns.indexOf('branch');
    const only = this.only;
    if (!only || idx < 0) {
      return this.data.rows;
    }
    return this.data.rows.filter(r => only.has(Number(r[idx])));
  }

  private sorted(): Cell[][] {
    const { columns } = this.data;
    const data = this.kept().slice();
    if (this.sortBy) {
      const idx = columns.indexOf(this.sortBy.column);
      const sign = this.sortBy.desc ? -1 : 1;
      data.sort((a, b) => {
        const x = a[idx];
        const y = b[idx];
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

  private renderChoices(): void {
    const { columns } = this.data;
    if (this.columnsNode.childElementCount && this.columnsNode.dataset.cols === columns.join(',')) {
      return;
    }
    this.columnsNode.textContent = '';
    this.columnsNode.dataset.cols = columns.join(',');
    this.columnsNode.append(el('summary', '', 'Columns'));
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
        this.render();
      };
      const label = el('label', 'lithify-column-choice');
      label.append(box, el('span', '', c));
      this.columnsNode.append(label);
    }
  }

  /** Draw the table. Rows that are still there keep their elements (see ``redraw``): the
   * results tab redraws it every second while a sweep runs, and a click on a row or a header
   * must not be lost to that. */
  render(): void {
    this.renderChoices();
    const shown = this.shown();
    const head = el('tr');
    head.dataset.key = 'head';
    for (const [c] of shown) {
      const arrow = this.sortBy?.column === c ? (this.sortBy.desc ? ' ▼' : ' ▲') : '';
      const th = el('th', '', c + arrow);
      th.dataset.column = c;
      th.onclick = () => {
        this.sortBy = { column: c, desc: this.sortBy?.column === c ? !this.sortBy.desc : false };
        this.render();
      };
      head.append(th);
    }
    const rows = [head];
    const idx = this.data.columns.indexOf('branch');
    const stateAt = this.data.columns.indexOf('state');
    const metrics = new Set(this.data.metrics ?? []);
    const seen = new Map<string, number>(); // a branch's rows (one per step in some matrices)
    this.sorted()
      .slice(0, SHOWN_ROWS)
      .forEach((r, i) => {
        const tr = el('tr');
        const state = stateAt >= 0 && typeof r[stateAt] === 'string' ? String(r[stateAt]) : '';
        const partial = PARTIAL.includes(state);
        if (state) {
          tr.dataset.state = state;
        }
        shown.forEach(([c, j]) => {
          const td = el('td', '', readable(c, r[j]));
          if (c === 'state' && state) {
            td.className = `lithify-state lithify-state-${state}`;
          } else if (partial && metrics.has(c) && r[j] !== null && r[j] !== undefined) {
            td.className = 'lithify-partial'; // its last report, not a result
            td.title = `partial: the last value a ${state} fork reported, not a result`;
          }
          tr.append(td);
        });
        if (idx >= 0) {
          const branch = Number(r[idx]);
          tr.dataset.branch = String(branch);
          tr.classList.toggle('jp-mod-selected', branch === this.picked);
          tr.onclick = () => this.onPick(branch);
          const n = seen.get(tr.dataset.branch) ?? 0;
          seen.set(tr.dataset.branch, n + 1);
          tr.dataset.key = `b${branch}.${n}`;
        } else {
          tr.dataset.key = `r${i}`;
        }
        rows.push(tr);
      });
    let table = this.node.querySelector(':scope > table.lithify-table');
    if (!table) {
      table = el('table', 'lithify-table');
      this.node.replaceChildren(table);
    }
    redraw(table, rows);
  }
}
