// A sweep's results matrix as a table: columns the user chooses, sorted by a clicked header,
// and the same table as CSV (what is shown, in the order shown).

import { el, readable } from './dom';
import type { Cell, MatrixResponse } from './types';

const SHOWN_ROWS = 500;

export class MatrixTable {
  readonly columnsNode = el('details', 'lithify-columns');
  readonly node = el('div', 'lithify-matrix');
  private data: MatrixResponse = { columns: [], rows: [] };
  private hidden = new Set<string>();
  private sortBy: { column: string; desc: boolean } | null = null;

  get rowCount(): number {
    return this.data.rows.length;
  }

  set(data: MatrixResponse): void {
    this.data = data;
    this.render();
  }

  /** Empty, with every choice forgotten (another journal). */
  reset(): void {
    this.hidden.clear();
    this.sortBy = null;
    this.columnsNode.textContent = '';
    this.set({ columns: [], rows: [] });
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

  private sorted(): Cell[][] {
    const { columns, rows } = this.data;
    const data = rows.slice();
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

  render(): void {
    this.renderChoices();
    const shown = this.shown();
    const t = el('table', 'lithify-table');
    const head = el('tr');
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
    t.append(head);
    for (const r of this.sorted().slice(0, SHOWN_ROWS)) {
      const tr = el('tr');
      shown.forEach(([c, i]) => tr.append(el('td', '', readable(c, r[i]))));
      t.append(tr);
    }
    this.node.textContent = '';
    this.node.append(t);
  }
}
