// The results of a selection — a sweep, the branches picked in the fork tree, or a filter's —
// as a panel in the main area: for a sweep its progress and actions; a view of the results drawn
// in the browser (tooltips, a click that selects the branch in the fork tree, a box that zooms
// or, on parallel coordinates, keeps branches), the downloads, and the matrix as a table that a
// filter expression narrows. Polled while a sweep runs; another journal at the same name empties
// it and it starts over.

import type { JupyterFrontEnd } from '@jupyterlab/application';
import { Widget } from '@lumino/widgets';

import * as api from './api';
import { ChartView, prefetch } from './chart';
import { darkTheme, el, message } from './dom';
import { FilterBox } from './filterBox';
import type { Replacements } from './journals';
import { MatrixTable } from './matrixTable';
import { ResultsControls } from './resultsControls';
import { SweepStatus } from './sweepStatus';
import type { Target } from './types';

const POLL_MS = 1000;
const ENDED = ['finished', 'failed', 'cancelled', 'pruned'];

const SWEEP_NAMES: { [kind: string]: string } = { optimize: 'Study', evolve: 'Evolution' };

/** How a panel names its selection; a sweep by its kind once known (a study, an evolution). */
export function describe(t: Target, kind?: string): string {
  const what =
    t.sweep !== null && t.sweep !== undefined
      ? `${SWEEP_NAMES[kind ?? ''] ?? 'Sweep'} ${t.sweep}`
      : t.branches && t.branches.length
        ? `${t.branches.length} branch${t.branches.length === 1 ? '' : 'es'}`
        : 'Branches';
  return `${what}${t.where ? ` where ${t.where}` : ''}`;
}

/** One panel per selection: its key. */
export function targetKey(t: Target): string {
  return `${t.journal}#${t.sweep ?? ''}#${(t.branches || []).join(',')}#${t.where || ''}`;
}

export class Results extends Widget {
  private timer = 0;
  private generation = 0; // one per start over: answers for an older one are dropped
  private seen = ''; // the sweep's fork point and forks, as first seen
  private sweepStatus: SweepStatus | null = null;
  private controls: ResultsControls;
  private chart: ChartView;
  private exports = el('div', 'lithify-exports');
  private table = new MatrixTable();
  private tableFilter: FilterBox;
  private tableNote = el('div', 'lithify-table-note');
  private filtered: Set<number> | null = null; // the table filter's branches
  private kept: Set<number> | null = null; // the parallel box's branches
  private lastChartKey = '';
  private heading = el('h3', '');
  private kind = ''; // the sweep's kind, once its state has been read
  private finishedOnce = false;
  private themes = new MutationObserver(() => void this.drawChart(true));
  private stopListening: () => void;

  constructor(
    private app: JupyterFrontEnd,
    readonly target: Target,
    replacements: Replacements
  ) {
    super();
    this.addClass('lithify-results');
    const journal = target.journal;
    this.title.closable = true;
    this.controls = new ResultsControls(target, again => void this.redraw(again));
    this.chart = new ChartView({
      pick: branch => this.pick(branch),
      keep: branches => {
        this.kept = branches ? new Set(branches) : null;
        this.showTable();
      }
    });
    this.table.onPick = branch => this.pick(branch);
    this.tableFilter = new FilterBox('filter the table: budget >= 1000 and recall > 0.5', async text => {
      if (!text) {
        this.filtered = null;
        this.showTable();
        return '';
      }
      const found = await api.filter(journal, text, target.sweep ?? null);
      this.filtered = new Set(found.branches);
      this.showTable();
      return `${found.count} of ${found.total} branches`;
    });
    this.node.append(this.heading);
    this.name();
    if (target.sweep !== null && target.sweep !== undefined) {
      this.sweepStatus = new SweepStatus(app, journal, target.sweep, () => this.start());
      this.node.append(this.sweepStatus.node);
    }
    this.node.append(
      this.controls.node,
      this.controls.message,
      this.chart.node,
      this.exports,
      this.tableFilter.node,
      this.tableNote,
      this.table.columnsNode,
      this.table.node
    );
    this.stopListening = replacements.listen(j => j === journal && this.reset());
    // the chart first: the status, table and choices of 10^4 forks would hold it up
    prefetch();
    void this.firstChart().finally(() => this.start());
    // charts follow JupyterLab's theme: drawn again (dark or light) when it changes
    this.themes.observe(document.body, { attributes: true, attributeFilter: ['data-jp-theme-light'] });
  }

  get journal(): string {
    return this.target.journal;
  }

  /** The rule's chart of the selection, asked for at once, beside the status, the table and
   * the choices (on 10^4 branches those take seconds; the chart should not wait for them). */
  private async firstChart(): Promise<void> {
    const generation = this.generation;
    try {
      const spec = await api.chartSpec({
        ...api.selection(this.target),
        kind: 'metric',
        theme: darkTheme() ? 'dark' : 'light'
      });
      if (generation !== this.generation || this.lastChartKey || this.chart.current) {
        return; // the choices arrived first and drew
      }
      await this.chart.show(spec, darkTheme());
      this.controls.drawn(spec.usermeta.lithify);
      this.chart.node.dataset.query = api.query({ ...api.selection(this.target), kind: 'metric' });
    } catch {
      // nothing to draw yet: the choices will say why
    }
  }

  /** Poll (again) until the sweep has ended (a selection: until its rows stop changing). */
  start(): void {
    window.clearInterval(this.timer);
    this.finishedOnce = false;
    void this.poll();
    this.timer = window.setInterval(() => void this.poll(), POLL_MS);
  }

  /** The tab's title, its tooltip and the panel's heading: what it shows, of which journal. */
  private name(): void {
    const what = describe(this.target, this.kind);
    this.title.label = `${what} · ${this.target.journal}`;
    this.title.caption = `${what} of ${this.target.journal}`;
    this.heading.textContent = `${what} of ${this.target.journal}`;
  }

  /** Another journal at this name: nothing shown stays; start over from what it holds. */
  reset(): void {
    this.generation++;
    this.seen = '';
    this.sweepStatus?.reset();
    this.controls.reset();
    this.chart.clear();
    this.exports.textContent = '';
    this.lastChartKey = '';
    this.filtered = null;
    this.kept = null;
    this.tableFilter.clear();
    this.table.reset();
    this.start();
  }

  /** A branch was picked (a mark, a row): select it in the fork tree. */
  private pick(branch: number): void {
    this.table.picked = branch;
    this.table.render();
    this.node.dataset.picked = String(branch);
    void this.app.commands.execute('lithify:select-branch', { journal: this.journal, branch });
  }

  private showTable(): void {
    const sets = [this.filtered, this.kept].filter((s): s is Set<number> => s !== null);
    const only = sets.length ? new Set([...sets[0]].filter(b => sets.every(s => s.has(b)))) : null;
    this.table.keepOnly(only);
    this.tableNote.textContent = only ? `${this.table.shownCount} of ${this.table.rowCount} rows shown` : '';
    this.tableNote.dataset.shown = String(this.table.shownCount);
  }

  /** Ask which views can draw (again: after y changed), then draw. */
  private async redraw(again: boolean): Promise<void> {
    if (again) {
      await this.loadAxes();
    }
    await this.drawChart(true);
  }

  private async loadAxes(): Promise<boolean> {
    const generation = this.generation;
    const [y, y2] = this.controls.metrics;
    try {
      const axes = await api.axes(this.target, y, y2);
      if (generation !== this.generation) {
        return false;
      }
      if (!axes.metrics.length) {
        this.controls.message.textContent = 'Nothing to chart yet: no metric observed in this selection.';
        return false;
      }
      this.controls.offer(axes);
      return true;
    } catch (e) {
      this.controls.message.textContent = message(e);
      return false;
    }
  }

  private async drawChart(force = false): Promise<void> {
    if (!this.controls.ready) {
      return;
    }
    const query = this.controls.query(darkTheme());
    const key = `${api.query(query)}#${this.table.rowCount}`;
    if (!force && key === this.lastChartKey) {
      return;
    }
    this.lastChartKey = key;
    const generation = this.generation;
    const why = this.controls.why;
    if (why) {
      this.controls.message.textContent = why;
      this.chart.clear();
      return;
    }
    try {
      const spec = await api.chartSpec(query);
      if (generation !== this.generation) {
        return;
      }
      const redrawn = await this.chart.show(spec, darkTheme());
      this.controls.drawn(spec.usermeta.lithify);
      this.controls.message.textContent = '';
      this.chart.node.dataset.query = api.query(query);
      this.chart.node.dataset.rows = String(this.table.rowCount);
      if (redrawn) {
        this.kept = null; // the box went with the chart it was drawn on
      }
      this.showTable();
      this.renderExports(query);
    } catch (e) {
      if (generation === this.generation) {
        this.controls.message.textContent = message(e);
        this.chart.clear();
      }
    }
  }

  private renderExports(query: api.Query): void {
    this.exports.textContent = '';
    const t = this.target;
    const stem = t.sweep !== null && t.sweep !== undefined ? `sweep-${t.sweep}` : 'branches';
    const link = (cls: string, text: string, href: string, file: string) => {
      const a = el('a', `lithify-button lithify-download ${cls}`, text);
      a.href = href;
      a.download = file;
      this.exports.append(a);
    };
    const table = el('a', 'lithify-button lithify-download lithify-table-csv', 'Table CSV');
    table.title = 'The table as shown: its rows, columns and order';
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
    link('lithify-csv', 'CSV', api.matrixFile(t, 'csv'), `${stem}.csv`);
    link('lithify-parquet', 'Parquet', api.matrixFile(t, 'parquet'), `${stem}.parquet`);
    const light = { ...query, theme: 'light' };
    const kind = String(query.kind || 'metric');
    link('lithify-png', 'PNG', api.chartFile('png', light), `${stem}-${kind}.png`);
    link('lithify-svg', 'SVG', api.chartFile('svg', light), `${stem}-${kind}.svg`);
  }

  async poll(): Promise<void> {
    const generation = this.generation;
    const t = this.target;
    try {
      let ended = true;
      if (t.sweep !== null && t.sweep !== undefined && this.sweepStatus) {
        const mine = (await api.sweeps(this.journal)).sweeps.find(s => s.id === t.sweep);
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
          this.sweepStatus.say(`${this.journal} has no sweep ${t.sweep}.`);
          return;
        }
        if (mine.kind !== this.kind) {
          this.kind = mine.kind;
          this.name();
        }
        this.sweepStatus.show(mine);
        ended = !mine.running && mine.forks.every(f => ENDED.includes(f.status));
      }
      const before = this.table.rowCount;
      const m = await api.matrix(t);
      if (generation !== this.generation) {
        return;
      }
      this.table.set(m);
      this.showTable();
      if (m.rows.length && (!this.controls.ready || m.rows.length !== before)) {
        await this.loadAxes(); // the first rows, or more: which views can draw now
      }
      if (m.rows.length) {
        await this.drawChart();
      }
      if (ended || (t.sweep === null || t.sweep === undefined) && m.rows.length === before) {
        if (this.finishedOnce) {
          window.clearInterval(this.timer); // one more poll after the end, then stop
        }
        this.finishedOnce = true;
      }
    } catch (e) {
      if (generation === this.generation) {
        if (this.sweepStatus) {
          this.sweepStatus.say(message(e));
        } else {
          this.controls.message.textContent = message(e);
        }
      }
    }
  }

  dispose(): void {
    window.clearInterval(this.timer);
    this.themes.disconnect();
    this.chart.dispose();
    this.stopListening();
    super.dispose();
  }
}
