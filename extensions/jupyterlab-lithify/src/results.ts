// The results of a selection — a sweep, the branches picked in the fork tree, or a filter's —
// as a panel in the main area: for a sweep its progress and actions; a view of the results drawn
// in the browser (tooltips, a click that selects the branch in the fork tree, a box that zooms
// or, on parallel coordinates, keeps branches), the downloads, and the matrix as a table that a
// filter expression narrows. Polled while a sweep runs (the chart shown stays until its
// refresh is drawn; a study's new trials extend it, never empty it); another journal at the same
// name (the server names each journal it answers for) empties it and it starts over.

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
import { describe, fingerprint, follows } from './selection';
import type { Target } from './types';

const POLL_MS = 1000;
const WATCH_MS = 5000; // once ended: how often the journal is asked whether it was replaced
const ENDED = ['finished', 'failed', 'cancelled', 'pruned'];

export class Results extends Widget {
  private timer = 0;
  private watchTimer = 0; // once ended: whether the journal was replaced
  private rowsSeen = ''; // the table's fingerprint: the chart is drawn again when it changes
  private generation = 0; // one per start over: answers for an older one are dropped
  private seen = ''; // the sweep's fork point and forks, as first seen
  private version = ''; // the journal's version at the last full read
  private running = true; // a coordinator ran the sweep at the last read: read it again
  private settled = false; // the last two reads were at the same version
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
    this.controls.onPartial = on => {
      this.target.partial = on; // the matrix, the axes and the charts alike
      this.lastChartKey = '';
      this.version = ''; // another matrix: read it whatever the journal's version
      void this.redraw(true).then(() => this.start());
    };
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
      const found = await api.filter(journal, text, target.sweep ?? null, !!target.partial);
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
      this.controls.message.textContent = spec.usermeta.lithify.waiting ?? '';
      this.chart.node.dataset.query = api.query({ ...api.selection(this.target), kind: 'metric' });
    } catch {
      // nothing to draw: the choices will say why
    }
  }

  /** Poll (again) until the sweep has ended (a selection: until its rows stop changing). */
  start(): void {
    window.clearInterval(this.timer);
    window.clearInterval(this.watchTimer);
    delete this.node.dataset.ended;
    this.finishedOnce = false;
    this.version = ''; // (re)started: the first poll reads everything
    void this.poll();
    this.timer = window.setInterval(() => void this.poll(), POLL_MS);
  }

  /** Ended: stop polling, but ask now and then which journal is at this name (an answer
   * about another one starts every view of it over, this one too). */
  private ended(): void {
    window.clearInterval(this.timer);
    window.clearInterval(this.watchTimer);
    this.node.dataset.ended = '1';
    this.watchTimer = window.setInterval(() => void api.tailEnd(this.journal).catch(() => undefined), WATCH_MS);
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
    this.version = '';
    this.running = true;
    this.sweepStatus?.reset();
    this.controls.reset();
    this.chart.clear();
    this.exports.textContent = '';
    this.lastChartKey = '';
    this.rowsSeen = '';
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

  /** Ask which views can draw (again: after y changed), then draw. What is shown says at
   * once that another chart is coming (a chart of another view goes at once). */
  private async redraw(again: boolean): Promise<void> {
    if (this.controls.ready && !this.controls.why) {
      this.chart.loading(this.controls.kind);
    }
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
    const key = `${api.query(query)}#${this.rowsSeen}`;
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
      this.controls.message.textContent = spec.usermeta.lithify.waiting ?? '';
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
        const refused = e instanceof api.ApiError && e.status >= 400 && e.status < 500;
        if (force || refused) {
          this.chart.clear(); // the chart asked for cannot be drawn: none stands in for it
        }
        // else a refresh that failed (the server busy a moment): the chart shown stays
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
      const { version } = await api.version(this.journal);
      if (generation !== this.generation) {
        return;
      }
      if (version === this.version && this.settled && !this.running) {
        if (this.finishedOnce) {
          this.ended(); // it had ended, and nothing came since: stop
        }
        return; // nothing changed since the last two reads: nothing is read again
      }
      this.running = false;
      let ended = true;
      if (t.sweep !== null && t.sweep !== undefined && this.sweepStatus) {
        const mine = (await api.sweeps(this.journal)).sweeps.find(s => s.id === t.sweep);
        if (generation !== this.generation) {
          return;
        }
        const seen = mine ? `${mine.base}@${mine.at}:${mine.forks.map(f => f.branch).join(',')}` : '';
        if (this.seen && !follows(this.seen, seen)) {
          this.reset(); // the sweep changed under its id: another journal at this name
          return;
        }
        this.seen = seen;
        if (!mine) {
          this.ended();
          this.sweepStatus.say(`${this.journal} has no sweep ${t.sweep}.`);
          return;
        }
        if (mine.kind !== this.kind) {
          this.kind = mine.kind;
          this.name();
        }
        this.sweepStatus.show(mine);
        this.running = mine.running; // its forks' progress moves without the journal changing
        ended = !mine.running && mine.forks.every(f => ENDED.includes(f.status));
      }
      const before = this.table.rowCount;
      const m = await api.matrix(t);
      if (generation !== this.generation) {
        return;
      }
      this.table.set(m);
      this.showTable();
      const rows = fingerprint(m.rows);
      const changed = rows !== this.rowsSeen;
      this.rowsSeen = rows;
      if (m.rows.length && (!this.controls.ready || m.rows.length !== before || changed)) {
        await this.loadAxes(); // the first rows, more, or new values: which views can draw now
      }
      if (m.rows.length) {
        await this.drawChart();
      }
      // read twice at one version before polls skip: the server may answer a moment's
      // requests from what it read just before a change
      this.settled = version === this.version;
      this.version = version;
      if (ended || (t.sweep === null || t.sweep === undefined) && m.rows.length === before) {
        if (this.finishedOnce) {
          this.ended(); // one more poll after the end, then stop
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
    window.clearInterval(this.watchTimer);
    this.themes.disconnect();
    this.chart.dispose();
    this.stopListening();
    super.dispose();
  }
}
