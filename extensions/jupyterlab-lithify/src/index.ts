// lithify in JupyterLab: the journals under the server root in the sidebar (journal ->
// branches -> events), the payload and state of the selected event, "Fork sweep from here..."
// on any event, and a results panel with the live matrix and chart. Everything is computed by
// the Python library behind /lithify/api/ (workbench/server.py); this file only displays it.

import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { Dialog, ICommandPalette, MainAreaWidget, showDialog } from '@jupyterlab/apputils';
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import { LabIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

const ROW = 22;
const PAGE = 100;

const icon = new LabIcon({
  name: 'lithify:journal',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><g class="jp-icon3" fill="#616161">' +
    '<circle cx="6" cy="5" r="2.5"/><circle cx="6" cy="19" r="2.5"/><circle cx="18" cy="12" r="2.5"/>' +
    '<rect x="5" y="5" width="2" height="14"/><path d="M6 9c0 3 4 3 10 3v2C9 14 6 13 6 9z"/></g></svg>'
});

interface EventRow {
  branch: number;
  seq: number;
  kind: string;
  hash: string;
  summary: string;
  payload: unknown;
}

interface Branch {
  id: number;
  name: string | null;
  parent: number | null;
  fork_seq: number;
  head: number;
  params: Record<string, unknown>;
  status: string | null;
}

interface Selection {
  journal: string;
  branch: number;
  seq: number;
}

async function api<T>(path: string, init: RequestInit = {}): Promise<T> {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, 'lithify/api', path);
  const response = await ServerConnection.makeRequest(url, init, settings);
  const text = await response.text();
  let body: any = {};
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    body = { error: text };
  }
  if (!response.ok) {
    throw new Error(body.error || response.statusText);
  }
  return body as T;
}

function q(params: Record<string, string | number>): string {
  return Object.entries(params)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls = '',
  text = ''
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) {
    node.className = cls;
  }
  if (text) {
    node.textContent = text;
  }
  return node;
}

/** A list that renders only the rows in view, loading pages of events as they scroll in. */
class EventList {
  readonly node = el('div', 'lithify-events');
  private spacer = el('div', 'lithify-events-spacer');
  private pages = new Map<number, EventRow[]>();
  private loading = new Set<number>();
  private head = 0;
  selected = -1;

  constructor(
    private journal: string,
    private branch: number,
    private onSelect: (row: EventRow) => void,
    private onContext: (row: EventRow) => void
  ) {
    this.node.appendChild(this.spacer);
    this.node.addEventListener('scroll', () => this.render());
  }

  async load(): Promise<void> {
    const first = await api<{ head: number; events: EventRow[] }>(
      `events?${q({ journal: this.journal, branch: this.branch, offset: 1, limit: 1 })}`
    );
    this.head = first.head;
    this.spacer.style.height = `${this.head * ROW}px`;
    this.node.scrollTop = Math.max(0, this.head * ROW - this.node.clientHeight);
    this.render();
  }

  private async page(p: number): Promise<void> {
    if (this.pages.has(p) || this.loading.has(p)) {
      return;
    }
    this.loading.add(p);
    const res = await api<{ events: EventRow[] }>(
      `events?${q({ journal: this.journal, branch: this.branch, offset: p * PAGE + 1, limit: PAGE })}`
    );
    this.pages.set(p, res.events);
    this.loading.delete(p);
    this.render();
  }

  render(): void {
    const top = this.node.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW) - 5);
    const last = Math.min(this.head, Math.ceil((top + (this.node.clientHeight || 300)) / ROW) + 5);
    this.spacer.querySelectorAll('.lithify-event').forEach(n => n.remove());
    for (let i = first; i < last; i++) {
      const p = Math.floor(i / PAGE);
      const rows = this.pages.get(p);
      if (!rows) {
        void this.page(p);
        continue;
      }
      const row = rows[i - p * PAGE];
      if (!row) {
        continue;
      }
      const line = el('div', `lithify-event lithify-kind-${row.kind}`);
      line.style.top = `${i * ROW}px`;
      line.dataset.seq = String(row.seq);
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
      this.spacer.appendChild(line);
    }
  }
}

/** The sidebar: journals, their branch trees, the events of a branch, the selected event. */
class Sidebar extends Widget {
  selection: Selection | null = null;
  private list = el('div', 'lithify-journals');
  private eventsBox = el('div', 'lithify-events-box');
  private detail = el('div', 'lithify-detail');
  private message = el('div', 'lithify-message');

  constructor(private app: JupyterFrontEnd) {
    super();
    this.id = 'lithify-sidebar';
    this.addClass('lithify-sidebar');
    this.title.icon = icon;
    this.title.caption = 'lithify journals';
    const header = el('div', 'lithify-header');
    const refresh = el('button', 'jp-Button lithify-button', 'Refresh');
    refresh.onclick = () => void this.refresh();
    header.append(el('span', 'lithify-title', 'Journals'), refresh);
    this.node.append(header, this.message, this.list, this.eventsBox, this.detail);
  }

  async refresh(): Promise<void> {
    try {
      const res = await api<{ journals: { path: string; bytes: number }[] }>('journals');
      this.list.textContent = ''; // after the await: overlapping refreshes never duplicate
      if (!res.journals.length) {
        this.list.append(el('div', 'lithify-empty', 'No journals (*.db) under the server root.'));
      }
      for (const j of res.journals) {
        const item = el('div', 'lithify-journal');
        const label = el('div', 'lithify-journal-label', `▸ ${j.path}`);
        const tree = el('div', 'lithify-branches');
        label.onclick = () => void this.toggle(j.path, label, tree);
        item.append(label, tree);
        this.list.append(item);
      }
      this.message.textContent = '';
    } catch (e) {
      this.message.textContent = String((e as Error).message);
    }
  }

  private async toggle(path: string, label: HTMLElement, tree: HTMLElement): Promise<void> {
    if (tree.childElementCount) {
      tree.textContent = '';
      label.textContent = `▸ ${path}`;
      return;
    }
    label.textContent = `▾ ${path}`;
    const res = await api<{ branches: Branch[] }>(`branches?${q({ journal: path })}`);
    const depth = new Map<number, number>();
    const children = new Map<number | null, Branch[]>();
    res.branches.forEach(b => children.set(b.parent, [...(children.get(b.parent) || []), b]));
    const walk = (parent: number | null, d: number) => {
      for (const b of children.get(parent) || []) {
        depth.set(b.id, d);
        const params = Object.entries(b.params)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ');
        const where = b.parent === null ? '' : ` @${b.fork_seq}`;
        const node = el(
          'div',
          'lithify-branch',
          `${b.name || '#' + b.id}${where} ${params} · head ${b.head}${b.status ? ' · ' + b.status : ''}`
        );
        node.style.paddingLeft = `${8 + d * 12}px`;
        node.dataset.branch = String(b.id);
        node.onclick = () => {
          tree.querySelectorAll('.lithify-branch').forEach(n => n.classList.remove('jp-mod-selected'));
          node.classList.add('jp-mod-selected');
          void this.showBranch(path, b.id);
        };
        tree.append(node);
        walk(b.id, d + 1);
      }
    };
    walk(null, 0);
  }

  private async showBranch(journal: string, branch: number): Promise<void> {
    this.eventsBox.textContent = '';
    this.detail.textContent = '';
    const list = new EventList(
      journal,
      branch,
      row => void this.showEvent(journal, branch, row),
      row => {
        this.selection = { journal, branch, seq: row.seq };
      }
    );
    this.eventsBox.append(el('div', 'lithify-subtitle', `Events of branch ${branch}`), list.node);
    await list.load();
  }

  private async showEvent(journal: string, branch: number, row: EventRow): Promise<void> {
    this.selection = { journal, branch, seq: row.seq };
    this.detail.textContent = '';
    const fork = el('button', 'jp-Button lithify-button lithify-fork', 'Fork sweep from here…');
    fork.onclick = () => void this.app.commands.execute('lithify:fork-sweep');
    const payload = el('pre', 'lithify-json', JSON.stringify(row.payload, null, 1));
    const stateBox = el('pre', 'lithify-json', 'loading state…');
    this.detail.append(
      el('div', 'lithify-subtitle', `seq ${row.seq} · ${row.kind} · ${row.hash.slice(0, 12)}`),
      fork,
      el('div', 'lithify-label', 'payload'),
      payload,
      el('div', 'lithify-label', `state at seq ${row.seq}`),
      stateBox
    );
    try {
      const st = await api<{ state: unknown }>(`state?${q({ journal, branch, seq: row.seq })}`);
      stateBox.textContent = JSON.stringify(st.state, null, 1);
    } catch (e) {
      stateBox.textContent = String((e as Error).message);
    }
  }
}

/** The results of a journal's sweeps: fork statuses, the matrix and the chart, polled. */
class Results extends Widget {
  private timer = 0;
  private chart = el('img', 'lithify-chart');
  private status = el('div', 'lithify-status');
  private table = el('div', 'lithify-matrix');

  constructor(private journal: string, private sweep: number) {
    super();
    this.addClass('lithify-results');
    this.title.label = `Sweep ${sweep} · ${journal}`;
    this.title.closable = true;
    this.node.append(el('h3', '', `Sweep ${sweep} of ${journal}`), this.status, this.chart, this.table);
    void this.poll();
    this.timer = window.setInterval(() => void this.poll(), 1500);
  }

  async poll(): Promise<void> {
    try {
      const sw = await api<{ sweeps: any[] }>(`sweeps?${q({ journal: this.journal })}`);
      const mine = sw.sweeps.find(s => s.id === this.sweep);
      if (mine) {
        const done = mine.forks.filter((f: any) => f.status === 'finished').length;
        this.status.textContent = `${done}/${mine.forks.length} forks finished · ${mine.forks
          .map((f: any) => `#${f.branch} ${f.status}${f.total ? ` ${f.done}/${f.total}` : ''}`)
          .join(' · ')}`;
        this.status.dataset.finished = String(done);
        if (!mine.running && done + mine.forks.filter((f: any) => f.status !== 'finished').length) {
          if (mine.forks.every((f: any) => ['finished', 'failed', 'cancelled'].includes(f.status))) {
            window.clearInterval(this.timer);
          }
        }
      }
      const m = await api<{ columns: string[]; rows: unknown[][] }>(
        `matrix?${q({ journal: this.journal, sweep: this.sweep })}`
      );
      const t = el('table', 'lithify-table');
      const head = el('tr');
      m.columns.forEach(c => head.append(el('th', '', c)));
      t.append(head);
      m.rows.slice(-40).forEach(r => {
        const tr = el('tr');
        r.forEach(v =>
          tr.append(
            el('td', '', typeof v === 'number' && !Number.isInteger(v) ? String(+v.toPrecision(4)) : String(v ?? ''))
          )
        );
        t.append(tr);
      });
      this.table.textContent = '';
      this.table.append(t);
      if (m.rows.length) {
        const settings = ServerConnection.makeSettings();
        const url = URLExt.join(settings.baseUrl, 'lithify/api', 'chart.svg');
        const probe = await ServerConnection.makeRequest(
          `${url}?${q({ journal: this.journal, sweep: this.sweep })}`,
          {},
          settings
        );
        if (probe.ok) {
          const svg = await probe.text();
          this.chart.src = `data:image/svg+xml;base64,${btoa(unescape(encodeURIComponent(svg)))}`;
          this.chart.dataset.rows = String(m.rows.length);
        }
      }
    } catch (e) {
      this.status.textContent = String((e as Error).message);
    }
  }

  dispose(): void {
    window.clearInterval(this.timer);
    super.dispose();
  }
}

function sweepForm(sel: Selection): Widget {
  const body = new Widget();
  body.addClass('lithify-form');
  const row = (label: string, input: HTMLElement) => {
    const r = el('label', 'lithify-form-row');
    r.append(el('span', '', label), input);
    body.node.append(r);
  };
  const grid = el('textarea');
  grid.name = 'grid';
  grid.value = 'budget=300,600,1200,2400,4800';
  const seeds = el('input');
  seeds.name = 'seeds';
  seeds.type = 'number';
  seeds.value = '1';
  const workers = el('input');
  workers.name = 'workers';
  workers.type = 'number';
  workers.value = '2';
  const runner = el('select');
  runner.name = 'runner';
  ['process', 'papermill', 'warm'].forEach(r => runner.append(new Option(r, r)));
  // the runners this server can use (dask when Dask distributed is installed there)
  void api<{ runners?: string[] }>('journals').then(res => {
    for (const r of res.runners || []) {
      if (!Array.from(runner.options).some(o => o.value === r)) {
        runner.append(new Option(r, r));
      }
    }
  });
  const notebook = el('input');
  notebook.name = 'notebook';
  notebook.placeholder = 'templates/auditor_fork.ipynb (papermill / warm)';
  const scheduler = el('input');
  scheduler.name = 'scheduler';
  scheduler.placeholder = 'dask: tcp://host:8786 (empty: a LocalCluster)';
  body.node.append(el('div', 'lithify-subtitle', `${sel.journal} · branch ${sel.branch} · at seq ${sel.seq}`));
  row('grid', grid);
  row('seeds', seeds);
  row('workers', workers);
  row('runner', runner);
  row('notebook', notebook);
  row('scheduler', scheduler);
  return body;
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'lithify-workbench:plugin',
  description: 'lithify journals: browse events, fork a sweep from any event, watch the results.',
  autoStart: true,
  requires: [ICommandPalette],
  optional: [ILayoutRestorer],
  activate: (app: JupyterFrontEnd, palette: ICommandPalette, restorer: ILayoutRestorer | null) => {
    const sidebar = new Sidebar(app);
    app.shell.add(sidebar, 'left', { rank: 600 });
    if (restorer) {
      restorer.add(sidebar, 'lithify-sidebar');
    }
    void sidebar.refresh();

    app.commands.addCommand('lithify:open-sidebar', {
      label: 'Lithify: Show Journals',
      execute: () => {
        app.shell.activateById(sidebar.id);
        void sidebar.refresh();
      }
    });
    app.commands.addCommand('lithify:refresh', {
      label: 'Lithify: Refresh Journals',
      execute: () => sidebar.refresh()
    });
    app.commands.addCommand('lithify:open-results', {
      label: 'Lithify: Open Sweep Results',
      execute: async (args: any) => {
        const journal = (args.journal as string) || sidebar.selection?.journal;
        if (!journal) {
          return;
        }
        let sweep = args.sweep as number | undefined;
        if (sweep === undefined) {
          const sw = await api<{ sweeps: { id: number }[] }>(`sweeps?${q({ journal })}`);
          sweep = sw.sweeps.length ? sw.sweeps[sw.sweeps.length - 1].id : undefined;
        }
        if (sweep === undefined) {
          return;
        }
        const panel = new MainAreaWidget({ content: new Results(journal, sweep) });
        panel.id = `lithify-results-${sweep}-${Date.now()}`;
        app.shell.add(panel, 'main', { mode: 'split-right' });
        app.shell.activateById(panel.id);
      }
    });
    app.commands.addCommand('lithify:fork-sweep', {
      label: 'Fork sweep from here…',
      caption: 'Fork one branch per grid point at the selected event and run them',
      isEnabled: () => sidebar.selection !== null,
      execute: async () => {
        const sel = sidebar.selection;
        if (!sel) {
          return;
        }
        const form = sweepForm(sel);
        const result = await showDialog({
          title: 'Fork a sweep from this event',
          body: form,
          buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Start sweep' })]
        });
        if (!result.button.accept) {
          return;
        }
        const value = (name: string) =>
          (form.node.querySelector(`[name=${name}]`) as HTMLInputElement).value;
        try {
          const started = await api<{ sweep: number }>('sweeps', {
            method: 'POST',
            body: JSON.stringify({
              journal: sel.journal,
              branch: sel.branch,
              at: sel.seq,
              grid: value('grid'),
              seeds: Number(value('seeds')) || null,
              workers: Number(value('workers')) || 2,
              runner: value('runner'),
              notebook: value('notebook') || null,
              scheduler: value('scheduler') || null
            })
          });
          await app.commands.execute('lithify:open-results', { journal: sel.journal, sweep: started.sweep });
        } catch (e) {
          await showDialog({
            title: 'The sweep did not start',
            body: String((e as Error).message),
            buttons: [Dialog.okButton()]
          });
        }
      }
    });
    app.contextMenu.addItem({ command: 'lithify:fork-sweep', selector: '.lithify-event', rank: 0 });
    for (const command of ['lithify:open-sidebar', 'lithify:refresh', 'lithify:fork-sweep', 'lithify:open-results']) {
      palette.addItem({ command, category: 'Lithify' });
    }
  }
};

export default plugin;
