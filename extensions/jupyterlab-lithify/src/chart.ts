// A results view drawn in the browser: the server's Vega-Lite spec (chart.json, data inline)
// embedded with vega-embed, which is bundled with this extension and loaded the first time a
// chart is drawn (never from a CDN). Every mark that stands for branches has a tooltip; a click
// on one picks its branch; dragging a box zooms into it (double-click or "Reset zoom" goes
// back), or, on parallel coordinates, keeps the branches inside it (a drag along one axis
// brushes that axis).

import type { Result } from 'vega-embed';

import { button, el } from './dom';
import type { ChartSpec } from './types';

/** What a chart tells its panel. */
export interface ChartEvents {
  /** A mark's branch was clicked. */
  pick(branch: number): void;
  /** Parallel coordinates: the branches inside the box (null: no box). */
  keep(branches: number[] | null): void;
}

type Ranges = Record<string, unknown[]>;
type Json = { [key: string]: unknown };

/** A tooltip as vega-tooltip writes it (a key/value table), without the ``notes`` line of a
 * branch that has none (Vega-Lite writes a missing value as the text "null"). */
function tooltipHtml(value: unknown, html: (v: unknown) => string): string {
  if (!isObject(value)) {
    return html(value);
  }
  const rows = Object.entries(value)
    .filter(([k, v]) => v !== undefined && !(k === 'notes' && (v === null || v === 'null' || v === '')))
    .map(([k, v]) => {
      const shown = typeof v === 'object' && v !== null ? JSON.stringify(v) : v;
      return `<tr><td class="key">${html(k)}</td><td class="value">${html(shown)}</td></tr>`;
    });
  return `<table>${rows.join('')}</table>`;
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A copy of ``spec`` whose x and y scales on the brushed fields show only the brushed range
 * (marks outside it clipped). */
export function zoomed(spec: ChartSpec, ranges: Ranges): ChartSpec {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) {
      return node.map(walk);
    }
    if (!isObject(node)) {
      return node;
    }
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) {
      out[k] = k === 'datasets' ? v : walk(v);
    }
    const enc = out.encoding;
    if (isObject(enc)) {
      let hit = false;
      for (const channel of ['x', 'y']) {
        const e = enc[channel];
        if (isObject(e) && typeof e.field === 'string' && e.type === 'quantitative') {
          const range = ranges[e.field];
          if (range && range.length === 2) {
            const scale = isObject(e.scale) ? e.scale : {};
            enc[channel] = { ...e, scale: { ...scale, domain: range, nice: false, zero: false } };
            hit = true;
          }
        }
      }
      if (hit && out.mark !== undefined) {
        out.mark = isObject(out.mark) ? { ...out.mark, clip: true } : { type: out.mark, clip: true };
      }
    }
    return out;
  };
  return walk(spec) as ChartSpec;
}

/** The branches whose line passes inside a box drawn on parallel coordinates: on every axis
 * the box covers, their position lies within its height. */
export function inside(spec: ChartSpec, box: Ranges): number[] {
  const axes = new Set((box.axis || []).map(String));
  const span = (box.position || []).map(Number);
  if (!axes.size || span.length !== 2) {
    return [];
  }
  const [lo, hi] = [Math.min(span[0], span[1]), Math.max(span[0], span[1])];
  const datasets = isObject(spec.datasets) ? Object.values(spec.datasets) : [];
  const passes = new Map<number, boolean>();
  for (const rows of datasets) {
    for (const row of rows as Json[]) {
      if (typeof row.branch === 'number' && typeof row.position === 'number' && axes.has(String(row.axis))) {
        const ok = row.position >= lo && row.position <= hi;
        passes.set(row.branch, (passes.get(row.branch) ?? true) && ok);
      }
    }
  }
  return Array.from(passes.entries())
    .filter(([, ok]) => ok)
    .map(([b]) => b)
    .sort((a, b) => a - b);
}

type View = Result['view'];
type PointScale = ((v: string) => number) & { domain(): string[]; step(): number };

/** A drag along one axis of parallel coordinates (a box too narrow to hold any, as a vertical
 * drag on an axis is) brushes that axis: the box is widened to straddle the nearest axis
 * (within half the distance between two), keeping its height. Whether it was. */
export async function snapToAxis(view: View): Promise<boolean> {
  const px: unknown = view.signal('brush_x');
  const py: unknown = view.signal('brush_y');
  if (!Array.isArray(px) || !Array.isArray(py) || px.length !== 2 || Math.abs(py[1] - py[0]) < 3) {
    return false; // no box, or a click
  }
  const [lo, hi] = [Math.min(px[0], px[1]), Math.max(px[0], px[1])];
  const x = view.scale('x') as unknown as PointScale;
  const at = x.domain().map(name => x(name));
  if (at.some(p => p >= lo && p <= hi)) {
    return false; // the box holds an axis already
  }
  const mid = (lo + hi) / 2;
  const nearest = at.reduce((a, b) => (Math.abs(b - mid) < Math.abs(a - mid) ? b : a), Infinity);
  if (!(Math.abs(nearest - mid) <= x.step() / 2)) {
    return false;
  }
  await view.signal('brush_x', [nearest - SNAP_PX, nearest + SNAP_PX]).runAsync();
  return true;
}

const SNAP_PX = 8; // half the width of a box snapped to an axis
const COMPOSED = ['facet', 'hconcat', 'vconcat', 'concat', 'repeat'];
const ROOM = 180; // px beside the plot: the y axis, its title and a legend

/** ``spec`` as wide as ``width`` px of panel allows (its plot, never under 260 px): a single or
 * layered view; composed ones (facets, side by side) keep their own widths. */
export function fitted(spec: ChartSpec, width: number): ChartSpec {
  const s = spec as unknown as Json;
  if (typeof s.width !== 'number' || width <= 0 || COMPOSED.some(k => k in s)) {
    return spec;
  }
  return { ...spec, width: Math.max(260, Math.min(1600, Math.round(width - ROOM))) } as ChartSpec;
}

/** Load vega (a chunk of this extension) now, while the first spec is being made. */
export function prefetch(): void {
  void import('vega-embed').catch(() => undefined);
}

export class ChartView {
  readonly node = el('div', 'lithify-chart-box');
  private canvas = el('div', 'lithify-vega');
  private resetButton: HTMLButtonElement;
  private result: Result | null = null;
  private spec: ChartSpec | null = null;
  private dark = false;
  private ranges: Ranges | null = null;
  private drawing = 0;
  private drawnWidth = 0; // the panel width the chart was fitted to
  private resizeTimer = 0;
  private resizes: ResizeObserver;

  constructor(private events: ChartEvents) {
    // the chart follows the panel's width: drawn again once a resize settles
    this.resizes = new ResizeObserver(() => {
      window.clearTimeout(this.resizeTimer);
      this.resizeTimer = window.setTimeout(() => {
        if (this.spec && Math.abs(this.node.clientWidth - this.drawnWidth) > 40) {
          void this.draw();
        }
      }, 200);
    });
    this.resizes.observe(this.node);
    this.resetButton = button('lithify-reset-zoom', 'Reset zoom', () => void this.unzoom());
    this.resetButton.style.display = 'none';
    this.node.append(this.canvas, this.resetButton);
    this.canvas.addEventListener('dblclick', () => void this.unzoom());
    // a box is done when the button comes up: read it then (not on every move)
    this.canvas.addEventListener('pointerup', () => window.setTimeout(() => void this.boxed(), 0));
  }

  /** What is drawn now (null: nothing). */
  get current(): ChartSpec | null {
    return this.spec;
  }

  /** Draw a spec (a new one forgets the zoom and the box; the same one again changes
   * nothing). Whether it was drawn. The chart shown stays until the new one is drawn: a live
   * refresh never leaves the box empty. A spec vega cannot draw throws (and is forgotten, so
   * it is drawn again when asked again). */
  async show(spec: ChartSpec, dark: boolean): Promise<boolean> {
    if (this.spec && dark === this.dark && JSON.stringify(spec) === JSON.stringify(this.spec)) {
      this.settled();
      return false; // a poll that found nothing new
    }
    this.spec = spec;
    this.dark = dark;
    this.ranges = null;
    try {
      await this.draw();
    } catch (e) {
      if (this.spec === spec) {
        this.spec = null;
      }
      this.settled();
      throw e;
    }
    return true;
  }

  /** Another view (or another choice) was asked for: say so at once, before its spec comes.
   * Another view's chart goes (it would stand for the one asked for); the same view's is
   * dimmed until its new one replaces it. */
  loading(kind: string): void {
    this.node.dataset.loading = kind;
    if (this.node.dataset.kind !== kind) {
      this.clear();
      this.node.dataset.loading = kind;
      this.canvas.append(el('div', 'lithify-chart-loading', `Drawing the ${kind} view…`));
    } else {
      this.node.classList.add('lithify-chart-stale');
    }
  }

  /** No longer loading: what is shown is what was asked for. */
  private settled(): void {
    delete this.node.dataset.loading;
    this.node.classList.remove('lithify-chart-stale');
    this.canvas.querySelector('.lithify-chart-loading')?.remove();
  }

  /** Nothing drawn. */
  clear(): void {
    this.drawing++; // a draw under way is dropped
    this.result?.finalize();
    this.result = null;
    this.spec = null;
    this.ranges = null;
    this.canvas.textContent = '';
    this.resetButton.style.display = 'none';
    delete this.node.dataset.kind;
    this.settled();
  }

  private async unzoom(): Promise<void> {
    if (this.ranges) {
      this.ranges = null;
      await this.draw();
    }
  }

  private async draw(): Promise<void> {
    if (!this.spec) {
      return;
    }
    const ticket = ++this.drawing;
    const { default: embed } = await import('vega-embed');
    if (ticket !== this.drawing) {
      return; // a newer spec came while vega loaded
    }
    this.drawnWidth = this.node.clientWidth;
    const spec = fitted(this.ranges ? zoomed(this.spec, this.ranges) : this.spec, this.drawnWidth);
    // drawn aside, then put in place of the chart shown: never an empty box in between
    const fresh = el('div', 'lithify-vega-view');
    const result = await embed(fresh, spec, {
      actions: false,
      renderer: 'svg',
      mode: 'vega-lite',
      tooltip: { theme: this.dark ? 'dark' : 'light', formatTooltip: tooltipHtml }
    });
    if (ticket !== this.drawing) {
      result.finalize();
      return;
    }
    this.result?.finalize();
    this.canvas.replaceChildren(fresh);
    this.settled();
    this.result = result;
    result.view.addEventListener('click', (_event, item) => {
      const datum: unknown = item && (item as { datum?: unknown }).datum;
      if (isObject(datum) && typeof datum.branch === 'number') {
        this.events.pick(datum.branch);
      }
    });
    const meta = this.spec.usermeta.lithify;
    this.node.dataset.kind = meta.kind;
    this.node.dataset.forks = String(meta.forks);
    this.resetButton.style.display = this.ranges ? '' : 'none';
    this.node.dataset.zoomed = this.ranges ? '1' : '';
  }

  /** A box was drawn (or cleared): zoom into it, or keep the branches inside it. */
  private async boxed(): Promise<void> {
    const view = this.result?.view;
    const meta = this.spec?.usermeta.lithify;
    if (!view || !meta || !meta.brush) {
      return;
    }
    let box: unknown;
    try {
      if (meta.brush === 'filter') {
        await snapToAxis(view);
      }
      box = view.signal('brush');
    } catch {
      return; // this view has no brush
    }
    const ranges: Ranges = {};
    if (isObject(box)) {
      for (const [field, value] of Object.entries(box)) {
        if (Array.isArray(value) && value.length) {
          ranges[field] = value;
        }
      }
    }
    if (meta.brush === 'filter') {
      const kept = Object.keys(ranges).length ? inside(this.spec!, ranges) : null;
      void view.signal('keep', kept && !kept.length ? [-1] : kept || []).runAsync();
      this.node.dataset.kept = kept ? String(kept.length) : '';
      this.events.keep(kept);
      return;
    }
    const numeric = Object.entries(ranges).filter(
      ([, v]) => v.length === 2 && typeof v[0] === 'number' && v[0] !== v[1]
    );
    if (numeric.length) {
      this.ranges = Object.fromEntries(numeric);
      void this.draw();
    }
  }

  dispose(): void {
    this.resizes.disconnect();
    window.clearTimeout(this.resizeTimer);
    this.result?.finalize();
  }
}
