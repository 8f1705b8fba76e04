// What a results panel draws: a tab per view (metric, history, importance, slice, contour,
// parallel, steps, pareto, timeline, rank, edf), each disabled with the server's one-line
// reason when it cannot draw the selection, and the choices that view takes (x, y, the second
// metric, colour, aggregation, a sweep to compare, the direction that is better, log x).
// Everything offered comes from the server's axes; nothing is decided here.

import * as api from './api';
import { el } from './dom';
import { type AxesResponse, type ChartMeta, VIEW_KINDS, type Target, type ViewKind } from './types';

const USES: Record<string, ViewKind[]> = {
  x: ['metric', 'rank'],
  y: VIEW_KINDS.filter(k => k !== 'timeline'), // the timeline draws the forks' times
  y2: ['pareto'],
  color: ['metric'],
  agg: ['metric'],
  compare: ['metric', 'edf'],
  direction: ['history', 'contour', 'pareto', 'rank'],
  log: ['metric']
};

export class ResultsControls {
  readonly node = el('div', 'lithify-results-controls');
  readonly message = el('div', 'lithify-chart-message');
  kind: ViewKind = 'metric';
  private tabs = el('div', 'lithify-view-tabs');
  private choices = el('div', 'lithify-controls');
  private buttons = new Map<ViewKind, HTMLButtonElement>();
  private select: Record<string, HTMLSelectElement> = {};
  private labels: Record<string, HTMLElement> = {};
  private logX = el('input', 'lithify-log-x');
  private logLabel = el('span', 'lithify-log-x-label', 'log x');
  private logAsked: boolean | null = null; // null: the rule decides
  private reasons: Partial<Record<ViewKind, string | null>> = {};
  private partialBox = el('input', 'lithify-partial-toggle');
  /** The partial-values box was ticked or unticked. */
  onPartial: (on: boolean) => void = () => undefined;

  constructor(
    private target: Target,
    private changed: (again: boolean) => void
  ) {
    for (const kind of VIEW_KINDS) {
      const b = el('button', 'jp-Button lithify-button lithify-view-tab', kind);
      b.dataset.kind = kind;
      b.onclick = () => this.choose(kind);
      this.buttons.set(kind, b);
      this.tabs.append(b);
    }
    this.logX.type = 'checkbox';
    this.logX.onchange = () => {
      this.logAsked = this.logX.checked;
      this.changed(false);
    };
    this.partialBox.type = 'checkbox';
    this.partialBox.onchange = () => this.onPartial(this.partialBox.checked);
    const partial = el('label', 'lithify-control lithify-control-partial');
    partial.title =
      'Also show the last values of forks that run or stopped short (pruned, failed, cancelled): ' +
      'intermediate reports, marked as such in the table and the charts';
    partial.append(this.partialBox, el('span', '', 'partial values'));
    this.node.append(this.tabs, partial, this.choices);
    this.markTabs(); // disabled until the server says which views can draw
  }

  /** Whether the selects are there (the first axes arrived). */
  get ready(): boolean {
    return 'y' in this.select;
  }

  /** Forget every choice (another journal at this name). */
  reset(): void {
    this.choices.textContent = '';
    this.select = {};
    this.labels = {};
    this.logAsked = null;
    this.reasons = {};
    this.kind = 'metric';
    this.message.textContent = '';
    this.markTabs();
  }

  /** Offer what the selection has (the first time), and which views can draw it. */
  offer(axes: AxesResponse): void {
    this.reasons = axes.views;
    if (!this.ready) {
      this.build(axes);
    } else {
      this.update(axes);
    }
    this.markTabs();
  }

  /** The pickers' choices as the selection has them now: a metric or a parameter that
   * appeared since they were built (a sweep's forks observe their last metrics at the end) is
   * offered too; what is picked stays picked. */
  private update(axes: AxesResponse): void {
    Object.entries(this.pickable(axes)).forEach(([name, options]) => this.fill(name, options));
  }

  /** The options of the pickers that follow the selection's parameters and metrics. */
  private pickable(axes: AxesResponse): Record<string, [string, string][]> {
    const plain = (values: string[]) => values.map(v => [v, v] as [string, string]);
    const none: [string, string] = ['', '(none)'];
    const others = this.target.sweep !== null && this.target.sweep !== undefined ? axes.sweeps.filter(s => s !== this.target.sweep) : [];
    return {
      x: plain(axes.params),
      y: plain(axes.metrics),
      y2: plain(axes.metrics),
      color: [none, ...plain(axes.params)],
      compare: [none, ...others.map(s => [String(s), `sweep ${s}`] as [string, string])]
    };
  }

  private fill(name: string, options: [string, string][]): void {
    const s = this.select[name];
    if (!s || Array.from(s.options).map(o => o.value).join('\n') === options.map(o => o[0]).join('\n')) {
      return;
    }
    const value = s.value;
    s.replaceChildren(...options.map(([v, text]) => new Option(text, v)));
    s.value = options.some(o => o[0] === value) ? value : (options[0]?.[0] ?? '');
  }

  private build(axes: AxesResponse): void {
    const make = (name: string, options: [string, string][], value: string | null) => {
      const s = el('select', `lithify-select-${name}`);
      s.name = name;
      options.forEach(([v, text]) => s.append(new Option(text, v)));
      s.value = value ?? '';
      s.onchange = () => {
        const y2 = this.select.y2;
        if (name === 'y' && y2 && y2.value === s.value) {
          // the second metric is another one than the first
          y2.value = Array.from(y2.options).find(o => o.value !== s.value)?.value ?? '';
        }
        this.changed(name === 'y' || name === 'y2');
      };
      this.select[name] = s;
      const label = el('label', `lithify-control lithify-control-${name}`);
      label.append(el('span', '', name === 'y2' ? 'against' : name), s);
      this.labels[name] = label;
      this.choices.append(label);
    };
    const c = this.pickable(axes);
    make('x', c.x, axes.x);
    make('y', c.y, axes.y);
    const second = axes.objectives[1] ?? axes.metrics.find(m => m !== axes.y) ?? null;
    make('y2', c.y2, second);
    make('color', c.color, axes.color);
    make('agg', ['mean', 'max', 'last'].map(v => [v, v] as [string, string]), 'mean');
    make('compare', c.compare, '');
    make('direction', [['', '(the study’s, or higher)'], ['maximize', 'higher is better'], ['minimize', 'lower is better']], '');
    const log = el('label', 'lithify-control lithify-control-log');
    log.append(this.logX, this.logLabel);
    this.labels.log = log;
    this.choices.append(log);
    if (this.kind === 'metric' && axes.objectives.length === 2 && !axes.views.pareto) {
      this.kind = 'pareto'; // a study of two objectives opens on its front (one or three: not)
    }
    this.markTabs();
  }

  /** Whether partial values are asked for. */
  get partial(): boolean {
    return this.partialBox.checked;
  }

  private choose(kind: ViewKind): void {
    if (this.reasons[kind] || !this.ready) {
      return;
    }
    this.kind = kind;
    this.markTabs();
    this.changed(false);
  }

  /** Each tab enabled when its view can draw, else disabled with the reason as its title; the
   * choices this view takes shown, the others hidden. */
  private markTabs(): void {
    if (this.reasons[this.kind]) {
      const usable = VIEW_KINDS.find(k => !this.reasons[k]);
      if (usable && this.kind !== 'metric') {
        this.kind = usable; // the view drawn before cannot draw this selection any more
      }
    }
    for (const [kind, b] of this.buttons) {
      const why = this.ready ? (this.reasons[kind] ?? null) : 'asking which views can draw…';
      b.disabled = why !== null;
      b.title = why ?? `Draw the ${kind} view`;
      b.classList.toggle('lithify-view-active', kind === this.kind);
    }
    for (const [name, label] of Object.entries(this.labels)) {
      label.style.display = USES[name]?.includes(this.kind) ? '' : 'none';
    }
    if (this.labels.compare && !this.select.compare?.options.length) {
      this.labels.compare.style.display = 'none';
    }
  }

  /** Why the current view cannot draw (null: it can). */
  get why(): string | null {
    return this.reasons[this.kind] ?? null;
  }

  /** The chosen y and second metric (for the axes' reasons). */
  get metrics(): [string | null, string | null] {
    return [this.select.y?.value || null, this.select.y2?.value || null];
  }

  /** The chart's query: the selection, the view and what it takes. */
  query(dark: boolean): api.Query {
    const v = (name: string) => (USES[name].includes(this.kind) ? this.select[name]?.value || null : null);
    const compare = v('compare');
    const sel = api.selection(this.target);
    return {
      ...sel,
      sweep: compare ? null : sel.sweep,
      sweeps: compare ? `${this.target.sweep},${compare}` : null,
      kind: this.kind,
      x: v('x'),
      y: v('y'),
      y2: v('y2'),
      color: compare || this.kind !== 'metric' ? null : (this.select.color?.value ?? null),
      agg: v('agg'),
      direction: v('direction'),
      log_x: this.kind === 'metric' && this.logAsked !== null ? (this.logAsked ? 1 : 0) : null,
      theme: dark ? 'dark' : 'light'
    };
  }

  /** Show what the drawn chart does: the log x box checked when x is logarithmic, saying
   * whether the rule chose it. */
  drawn(meta: ChartMeta): void {
    if (meta.kind === 'metric' && meta.log_x !== undefined) {
      this.logX.checked = meta.log_x;
      this.logLabel.textContent = meta.log_x_auto ? `log x (${meta.log_x ? 'auto: on' : 'auto: off'})` : 'log x';
      this.logX.dataset.state = meta.log_x ? 'log' : 'linear';
    }
  }
}
