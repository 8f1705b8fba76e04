// One sweep's results: progress and failures, cancel / rerun failed / resume, the chart with its
// axes, colour, aggregation and scale chosen from what the matrix holds, the matrix as a table
// and downloads; polled while the sweep runs. Another journal at the same name empties it and
// it starts over.

import type { JupyterFrontEnd } from '@jupyterlab/application';
import { Widget } from '@lumino/widgets';

import * as api from './api';
import { darkTheme, el, message } from './dom';
import type { Replacements } from './journals';
import { MatrixTable } from './matrixTable';
import type { ForkState, SweepState } from './types';

const POLL_MS = 1000;
const ENDED = ['finished', 'failed', 'cancelled'];

export class Results extends Widget {
  private timer = 0;
  private generation = 0; // one per start over: answers for an older one are dropped
  private seen = ''; // the sweep's fork point and forks, as first seen
  private chart = el('img', 'lithify-chart');
  private chartMessage = el('div', 'lithify-chart-message');
  private status = el('div', 'lithify-status');
  private bar = el('div', 'lithify-progress');
  private fill = el('div', 'lithify-progress-bar');
  private failures = el('div', 'lithify-failures');
  private actionsMessage = el('div', 'lithify-message');
  private controls = el('div', 'lithify-controls');
  private exports = el('div', 'lithify-exports');
  private table = new MatrixTable();
  private select: Record<string, HTMLSelectElement> = {};
  private logX = el('input');
  private lastChartKey = '';
  private finishedOnce = false;
  private cancelButton: HTMLButtonElement;
  private rerunButton: HTMLButtonElement;
  private resumeButton: HTMLButtonElement;
  private themes = new MutationObserver(() => void this.drawChart(true));
  private stopListening: () => void;

  constructor(
    private app: JupyterFrontEnd,
    readonly journal: string,
    readonly sweep: number,
    replacements: Replacements
  ) {
    super();
    this.addClass('lithify-results');
    this.title.label = `Sweep ${sweep} · ${journal}`;
    this.title.closable = true;
    this.bar.append(this.fill);
    const actions = el('div', 'lithify-actions');
    const action = (cls: string, text: string, call: (journal: string, sweep: number) => Promise<unknown>): HTMLButtonElement => {
      const b = el('button', `jp-Button lithify-button ${cls}`, text);
      b.onclick = async () => {
        try {
          await call(journal, sweep);
          this.actionsMessage.textContent = '';
          this.start();
        } catch (e) {
          this.actionsMessage.textContent = message(e);
        }
      };
      actions.append(b);
      return b;
    };
    this.cancelButton = action('lithify-cancel', 'Cancel', api.cancelSweep);
    this.rerunButton = action('lithify-rerun', 'Rerun failed', api.rerunSweep);
    this.resumeButton = action('lithify-resume', 'Resume', api.resumeSweep);
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
      this.table.columnsNode,
      this.table.node
    );
    this.logX.type = 'checkbox';
    this.logX.className = 'lithify-log-x';
    this.logX.checked = true;
    this.logX.onchange = () => void this.drawChart(true);
    this.stopListening = replacements.listen(j => j === journal && this.reset());
    void this.setupControls();
    this.start();
    // charts follow JupyterLab's theme: drawn again (dark or light) when it changes
    this.themes.observe(document.body, { attributes: true, attributeFilter: ['data-jp-theme-light'] });
  }

  /** Poll (again) until the sweep has ended. */
  start(): void {
    window.clearInterval(this.timer);
    this.finishedOnce = false;
    void this.poll();
    this.timer = window.setInterval(() => void this.poll(), POLL_MS);
  }

  /** Another journal at this name: nothing shown stays; start over from what it holds. */
  reset(): void {
    this.generation++;
    this.seen = '';
    this.status.textContent = '';
    delete this.status.dataset.finished;
    delete this.status.dataset.failed;
    this.fill.style.width = '0%';
    this.bar.classList.remove('lithify-progress-failed');
    this.failures.textContent = '';
    this.actionsMessage.textContent = '';
    this.controls.textContent = '';
    this.select = {};
    this.chartMessage.textContent = '';
    this.chart.removeAttribute('src');
    this.chart.style.display = 'none';
    delete this.chart.dataset.query;
    this.exports.textContent = '';
    this.logX.checked = true;
    this.lastChartKey = '';
    this.table.reset();
    this.start();
  }

  private async setupControls(): Promise<void> {
    const generation = this.generation;
    try {
      const axes = await api.axes(this.journal, this.sweep);
      if (generation !== this.generation) {
        return;
      }
      // the agent's default axes come before any row does: wait until the matrix has them
      if (!axes.x || !axes.y || !axes.params.includes(axes.x) || !axes.metrics.includes(axes.y)) {
        this.chartMessage.textContent = 'Nothing to chart yet: the matrix has no parameter and metric to plot.';
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
      make('compare', axes.sweeps.filter(s => s !== this.sweep).map(String), '', true);
      Array.from(this.select.compare.options).forEach(o => {
        if (o.value) {
          o.text = `sweep ${o.value}`;
        }
      });
      const log = el('label', 'lithify-control');
      log.append(this.logX, el('span', '', 'log x'));
      this.controls.append(log);
      this.chartMessage.textContent = '';
    } catch (e) {
      this.chartMessage.textContent = message(e);
    }
  }

  private chartQuery(): api.Query {
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
    const key = `${api.query(query)}#${this.table.rowCount}`;
    if (!force && key === this.lastChartKey) {
      return;
    }
    this.lastChartKey = key;
    const generation = this.generation;
    let svg: string;
    try {
      svg = await api.chartSvg(query);
    } catch (e) {
      if (generation === this.generation) {
        this.chartMessage.textContent = message(e);
        this.chart.style.display = 'none';
      }
      return;
    }
    if (generation !== this.generation) {
      return;
    }
    this.chartMessage.textContent = '';
    this.chart.style.display = '';
    this.chart.src = `data:image/svg+xml;base64,${btoa(unescape(encodeURIComponent(svg)))}`;
    this.chart.dataset.rows = String(this.table.rowCount);
    this.chart.dataset.query = api.query(query);
    this.renderExports(query);
  }

  private renderExports(query: api.Query): void {
    this.exports.textContent = '';
    const stem = `sweep-${this.sweep}`;
    const link = (cls: string, text: string, href: string, file: string) => {
      const a = el('a', `lithify-button lithify-download ${cls}`, text);
      a.href = href;
      a.download = file;
      this.exports.append(a);
    };
    const table = el('a', 'lithify-button lithify-download lithify-table-csv', 'Table CSV');
    table.title = 'The table as shown: its columns and order';
    table.href = '#';
    table.onclick = (ev: MouseEvent) => {
      ev.preventDefault();
      const a = document.createElement('a');
      a.href = URL.createObjectURL(new Blob([this.table.csv()], { type: 'text/csv' }));
      a.download = `${stem}-table.csv`;
      a.click();
      window.setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    };
    this.exports.append(table);
    link('lithify-csv', 'CSV', api.matrixFile(this.journal, this.sweep, 'csv'), `${stem}.csv`);
    link('lithify-parquet', 'Parquet', api.matrixFile(this.journal, this.sweep, 'parquet'), `${stem}.parquet`);
    const light = { ...query, theme: 'light' };
    link('lithify-png', 'PNG', api.chartFile('png', light), `${stem}.png`);
    link('lithify-svg', 'SVG', api.chartFile('svg', light), `${stem}.svg`);
  }

  async poll(): Promise<void> {
    const generation = this.generation;
    try {
      const mine = (await api.sweeps(this.journal)).sweeps.find(s => s.id === this.sweep);
      if (generation !== this.generation) {
        return;
      }
      const seen = mine ? `${mine.base}@${mine.at}:${mine.forks.map(f => f.branch).join(',')}` : '';
      if (this.seen && seen !== this.seen) {
        this.reset(); // the sweep changed under its id: another journal at this name
        return;
      }
      this.seen = seen;
      if (!mine) {
        window.clearInterval(this.timer);
        this.status.textContent = `${this.journal} has no sweep ${this.sweep}.`;
        return;
      }
      this.showProgress(mine);
      const m = await api.matrix(this.journal, this.sweep);
      if (generation !== this.generation) {
        return;
      }
      this.table.set(m);
      if (m.rows.length && !this.select.x) {
        await this.setupControls(); // the first rows: now there are axes to choose from
      }
      if (m.rows.length) {
        await this.drawChart();
      }
      if (!mine.running && mine.forks.every(f => ENDED.includes(f.status))) {
        if (this.finishedOnce) {
          window.clearInterval(this.timer); // one more poll after the end, then stop
        }
        this.finishedOnce = true;
      }
    } catch (e) {
      if (generation === this.generation) {
        this.status.textContent = message(e);
      }
    }
  }

  private showProgress(mine: SweepState): void {
    const forks = mine.forks;
    const count = (s: string) => forks.filter(f => f.status === s).length;
    const done = count('finished');
    const failed = count('failed');
    const cancelled = count('cancelled');
    this.status.textContent = `${done}/${forks.length} forks finished${failed ? ` · ${failed} failed` : ''}${
      cancelled ? ` · ${cancelled} cancelled` : ''
    }${mine.running ? ' · running' : ''}`;
    this.status.dataset.finished = String(done);
    this.status.dataset.failed = String(failed);
    this.fill.style.width = `${forks.length ? (100 * (done + failed)) / forks.length : 0}%`;
    this.bar.classList.toggle('lithify-progress-failed', failed > 0);
    this.showFailures(forks);
    // the actions that make sense now
    const unfinished = forks.filter(f => f.status !== 'finished').length;
    this.cancelButton.disabled = !mine.running;
    this.rerunButton.disabled = mine.running || failed === 0;
    this.resumeButton.disabled = mine.running || unfinished === 0;
  }

  /** Forks that failed the same way are one entry: the error once, every fork listed. */
  private showFailures(forks: ForkState[]): void {
    this.failures.textContent = '';
    const groups = new Map<string, ForkState[]>();
    for (const f of forks) {
      if (f.status === 'failed' && f.error) {
        const key = `${f.error.ename}|${f.error.evalue}|${f.error.cell}`;
        groups.set(key, [...(groups.get(key) || []), f]);
      }
    }
    for (const same of groups.values()) {
      const f = same[0];
      const e = f.error!;
      const box = el('div', 'lithify-failure');
      box.dataset.branch = String(f.branch);
      const where = e.cell !== undefined && e.cell !== null ? ` in cell ${e.cell}` : e.where ? ` (${e.where})` : '';
      const who = same.length === 1 ? `#${f.branch}` : `${same.length} forks (${same.map(x => '#' + x.branch).join(' ')})`;
      box.append(el('div', 'lithify-failure-title', `${who} ${e.ename}${where}: ${e.evalue}`));
      if (e.traceback && e.traceback.length) {
        box.append(el('pre', 'lithify-traceback', e.traceback.slice(-8).join('\n')));
      }
      for (const g of same.slice(0, 5)) {
        const path = g.notebook_rel;
        if (path) {
          const open = el('a', 'lithify-open-notebook', `open ${path}`);
          open.href = '#';
          open.onclick = (ev: MouseEvent) => {
            ev.preventDefault();
            void this.app.commands.execute('docmanager:open', { path });
          };
          box.append(open, el('span', '', ' '));
        }
      }
      this.failures.append(box);
    }
  }

  dispose(): void {
    window.clearInterval(this.timer);
    this.themes.disconnect();
    this.stopListening();
    super.dispose();
  }
}
