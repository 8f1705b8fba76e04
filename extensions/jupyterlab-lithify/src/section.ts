// One open journal in the sidebar: a filter over its branches, its fork tree ("Results for
// these": the marked branches', or the filter's), the selected branch's facts and events, the
// selected event's payload and state. It follows the journal live (the tail, polled), and when
// another journal appears under the same name (deleted and made again, a schema dropped and
// created) every part of it starts over, and the other views of that journal are told.

import type { JupyterFrontEnd } from '@jupyterlab/application';

import * as api from './api';
import { button, el, message, paramText, pretty, readable } from './dom';
import { annotate } from './annotations';
import { EventList } from './eventList';
import { FilterBox } from './filterBox';
import { ForkTree } from './forkTree';
import { Replacements, sameJournal, Selection } from './journals';
import { StudyList } from './studyList';
import type { Branch, EventRecord } from './types';

const TAIL_PAGE = 2000;

/** What a section needs from the sidebar that holds it. */
export interface SectionHost {
  readonly app: JupyterFrontEnd;
  readonly replacements: Replacements;
  selection: Selection | null;
  marked: Selection | null;
}

export class JournalSection {
  readonly node = el('div', 'lithify-section');
  private tree: ForkTree;
  private filterBox: FilterBox;
  private resultsButton: HTMLButtonElement;
  private studies: StudyList;
  private lastSweeps = ''; // the sweeps' states the study list was last read for
  private version = ''; // the journal's version the branch list was read at
  private error = el('div', 'lithify-section-error');
  private info = el('div', 'lithify-fork-info');
  private eventsBox = el('div', 'lithify-events-box');
  private detail = el('div', 'lithify-detail');
  private events: EventList | null = null;
  private branch: number | null = null;
  private cursor = -1;
  private known: Branch[] = []; // the branch list last fetched
  private lastStatuses = '';
  private busy = false;
  private lost = false; // the last poll failed: the journal was gone or unreadable
  private generation = 0; // one per journal seen at this name: late answers of an old one are dropped
  private reloaded = Date.now();
  private restarting = false; // telling the other views (they tell this one back)
  private stopListening: () => void;

  constructor(
    readonly journal: string,
    private host: SectionHost,
    onClose: () => void
  ) {
    this.node.dataset.journal = journal;
    const head = el('div', 'lithify-section-head');
    const label = el('span', 'lithify-journal-label lithify-open', `▾ ${journal}`);
    const close = el('button', 'lithify-icon-button lithify-close', '×');
    close.title = 'Close this journal';
    close.onclick = onClose;
    head.append(label, close);
    this.tree = new ForkTree(
      b => void this.showBranch(b),
      sweep => void host.app.commands.execute('lithify:open-results', { journal, sweep }),
      () => this.markResults()
    );
    this.filterBox = new FilterBox('filter: status == failed, sweep == 3, recall > 0.5', async text => {
      if (!text) {
        this.tree.filter(null);
        return '';
      }
      const found = await api.filter(journal, text);
      this.tree.filter(new Set(found.branches));
      return `${found.count} of ${found.total} branches`;
    });
    // "Results for these" follows the filter once it is applied (its text is known then)
    this.filterBox.onApplied = () => this.markResults();
    this.resultsButton = button('lithify-results-for', 'Results for these', () => this.openResults());
    this.resultsButton.disabled = true;
    const tools = el('div', 'lithify-tree-tools');
    tools.append(this.filterBox.node, this.resultsButton);
    this.studies = new StudyList(journal, sweep =>
      void host.app.commands.execute('lithify:open-results', { journal, sweep })
    );
    this.node.append(head, this.error, this.studies.node, tools, this.tree.node, this.tree.grip, this.info, this.eventsBox, this.detail);
    // another journal at this name, noticed by any view (the server names each journal)
    this.stopListening = host.replacements.listen(j => {
      if (j === journal && !this.restarting && this.cursor >= 0) {
        void this.restart(false);
      }
    });
  }

  /** The section was closed: it no longer follows its journal. */
  dispose(): void {
    this.stopListening();
    this.node.remove();
  }

  /** "Results for these": the marked branches (two or more), else the filter's, else the one. */
  private target(): { journal: string; branches?: number[]; where?: string } | null {
    const marked = Array.from(this.tree.marked).sort((a, b) => a - b);
    if (marked.length > 1 || (marked.length === 1 && !this.filterBox.text)) {
      return { journal: this.journal, branches: marked };
    }
    if (this.filterBox.text) {
      return { journal: this.journal, where: this.filterBox.text };
    }
    return null;
  }

  private markResults(): void {
    const t = this.target();
    this.resultsButton.disabled = t === null;
    this.resultsButton.title = !t
      ? 'Mark branches in the tree (Ctrl-click, Shift-click) or filter them first'
      : t.branches
        ? `The results of branches ${t.branches.join(', ')}`
        : `The results of the branches where ${t.where}`;
  }

  private openResults(): void {
    const t = this.target();
    if (t) {
      void this.host.app.commands.execute('lithify:open-results', { ...t });
    }
  }

  /** Select a branch (from a chart or a table): the tree scrolls to it, its facts and events
   * show. False when the journal has no such branch (yet). */
  async selectBranch(id: number): Promise<boolean> {
    let b = this.tree.select(id);
    if (!b) {
      await this.reloadBranches(false);
      b = this.tree.select(id);
    }
    if (!b) {
      return false;
    }
    this.node.scrollIntoView({ block: 'nearest' });
    await this.showBranch(b);
    return true;
  }

  async start(): Promise<void> {
    // the end first, then the branches: nothing appended in between is missed
    const tail = await api.tailEnd(this.journal);
    await this.reloadBranches();
    this.cursor = tail.cursor;
  }

  /** One live step: events after the cursor; new branches, heads and statuses redrawn. */
  async poll(): Promise<void> {
    if (this.busy || this.cursor < 0) {
      return;
    }
    this.busy = true;
    try {
      const heads = new Map<number, number>();
      for (;;) {
        const res = await api.tail(this.journal, this.cursor, TAIL_PAGE);
        res.events.forEach(e => heads.set(e.branch, Math.max(heads.get(e.branch) || 0, e.seq)));
        this.cursor = res.cursor;
        if (res.events.length < TAIL_PAGE) {
          break;
        }
      }
      if (this.lost) {
        await this.restart(); // readable again, perhaps another file: nothing old is trusted
        return;
      }
      // Heads come from the tail itself; the whole branch list (and run statuses) is fetched
      // only for branches not seen yet, after activity at most every 2 s, and every 5 s.
      const unknown = this.tree.updateHeads(heads);
      const now = Date.now();
      if (unknown.length || (heads.size && now - this.reloaded > 2000) || now - this.reloaded > 5000) {
        this.reloaded = now;
        await this.reloadBranches(false);
      }
      if (this.branch !== null && this.events && heads.has(this.branch)) {
        await this.events.load(true);
      }
    } catch (e) {
      if (e instanceof api.ApiError && e.status < 500) {
        this.lost = true; // deleted, or not a journal (yet): said here until it reads again
        this.error.textContent = `${this.journal}: ${e.message}`;
      }
    } finally {
      this.busy = false;
    }
  }

  /** Fetch the branches and redraw the tree when anything moved. A list that cannot follow
   * from the last one is another journal at this name: start over. */
  private async reloadBranches(force = true): Promise<void> {
    // an idle journal answers the cheap version call only: its 10^4 branches are not re-read
    const { version } = await api.version(this.journal);
    if (!force && version === this.version) {
      return;
    }
    const res = await api.branches(this.journal);
    this.version = version;
    if (this.known.length && !sameJournal(this.known, res.branches)) {
      await this.restart();
      return;
    }
    this.known = res.branches;
    const sweeps = res.sweeps.map(s => `${s.id}:${s.state}:${JSON.stringify(s.counts)}`).join(',');
    if (sweeps !== this.lastSweeps) {
      this.lastSweeps = sweeps; // a sweep started, ended or forked a trial: its row changed
      void this.studies.load();
    }
    const statuses = res.branches.map(b => `${b.id}:${b.head}:${b.status}`).join(',') + `|${sweeps}`;
    if (force || statuses !== this.lastStatuses) {
      this.lastStatuses = statuses;
      this.tree.setBranches(res.branches, res.sweeps);
    }
  }

  /** Another journal under this name: forget the old one's tree, selection, events, facts,
   * error and cursor, follow the new one from its end, and tell the other views. */
  private async restart(announce = true): Promise<void> {
    this.generation++;
    this.lost = false;
    this.error.textContent = '';
    this.branch = null;
    this.events = null;
    this.eventsBox.textContent = '';
    this.detail.textContent = '';
    this.info.textContent = '';
    this.known = [];
    this.lastStatuses = '';
    this.lastSweeps = '';
    this.version = '';
    this.tree.reset();
    this.filterBox.clear();
    this.markResults();
    for (const key of ['selection', 'marked'] as const) {
      if (this.host[key]?.journal === this.journal) {
        this.host[key] = null; // a point of the old file
      }
    }
    if (announce) {
      this.restarting = true;
      try {
        this.host.replacements.announce(this.journal);
      } finally {
        this.restarting = false;
      }
    }
    const tail = await api.tailEnd(this.journal);
    await this.reloadBranches();
    this.cursor = tail.cursor;
  }

  private async showBranch(b: Branch): Promise<void> {
    this.branch = b.id;
    this.eventsBox.textContent = '';
    this.detail.textContent = '';
    this.info.textContent = '';
    const list = new EventList(
      this.journal,
      b.id,
      row => void this.showEvent(b.id, row),
      row => {
        this.host.selection = { journal: this.journal, branch: b.id, seq: row.seq };
      }
    );
    this.events = list;
    this.eventsBox.append(el('div', 'lithify-subtitle', `Events of branch ${b.name || '#' + b.id}`), list.node);
    void this.showInfo(b.id);
    await list.load();
  }

  private async showInfo(branch: number): Promise<void> {
    const generation = this.generation;
    let text: string | HTMLElement;
    try {
      const d = await api.branch(this.journal, branch);
      const dl = el('dl', 'lithify-facts');
      const add = (k: string, v: string) => dl.append(el('dt', '', k), el('dd', '', v));
      add('branch', `${d.name || '#' + d.id}${d.parent === null ? '' : ` forked from ${d.parent}@${d.fork_seq}`}`);
      add('head', `${d.head} · ${d.head_hash.slice(0, 12)}`);
      if (Object.keys(d.params).length) {
        add('params', paramText(d.params));
      }
      if (d.status) {
        add('status', d.status);
      }
      const metrics = Object.entries(d.metrics);
      if (metrics.length) {
        add('metrics', metrics.map(([k, v]) => `${k} ${readable(k, v)}`).join(' · '));
      }
      if (d.error) {
        add('error', `${d.error.ename}: ${d.error.evalue}`);
      }
      annotate(dl, this.journal, d.id, d.notes, d.artifacts, () => void this.showInfo(branch));
      text = dl;
    } catch (e) {
      text = message(e);
    }
    if (generation === this.generation && this.branch === branch) {
      this.info.textContent = '';
      this.info.append(text);
    }
  }

  private async showEvent(branch: number, row: EventRecord): Promise<void> {
    const generation = this.generation;
    const here: Selection = { journal: this.journal, branch, seq: row.seq };
    this.host.selection = here;
    this.detail.textContent = '';
    const actions = el('div', 'lithify-actions');
    const fork = button('lithify-fork', 'Fork sweep from here…', () => {
      void this.host.app.commands.execute('lithify:fork-sweep');
    });
    const optimize = button('lithify-optimize', 'Optimize from here…', () => {
      void this.host.app.commands.execute('lithify:optimize');
    });
    const mark = button('lithify-mark', 'Mark for diff', () => {
      this.host.marked = here;
      mark.textContent = `Marked ${branch}@${row.seq}`;
    });
    actions.append(fork, optimize, mark);
    const m = this.host.marked;
    if (m && m.journal === this.journal && !(m.branch === branch && m.seq === row.seq)) {
      const to = `${branch}@${row.seq}`;
      actions.append(
        button('lithify-diff-button', `Diff ${m.branch}@${m.seq} → here`, () => {
          void this.host.app.commands.execute('lithify:diff', {
            journal: this.journal,
            from: `${m.branch}@${m.seq}`,
            to
          });
        })
      );
    }
    const stateBox = el('pre', 'lithify-json', 'loading state…');
    this.detail.append(
      el('div', 'lithify-subtitle', `seq ${row.seq} · ${row.kind} · ${row.hash.slice(0, 12)}`),
      actions,
      el('div', 'lithify-label', 'payload'),
      el('pre', 'lithify-json', pretty(row.payload)),
      el('div', 'lithify-label', `state at seq ${row.seq}`),
      stateBox
    );
    let text: string;
    try {
      text = pretty((await api.state(this.journal, branch, row.seq)).state);
    } catch (e) {
      text = message(e);
    }
    if (generation === this.generation) {
      stateBox.textContent = text;
    }
  }
}
