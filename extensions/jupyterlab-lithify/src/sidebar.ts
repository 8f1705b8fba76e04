// The sidebar: open a journal by path or URL, every journal under the server root, and a
// section per open journal, each following its journal live. The open journals are kept in
// the workspace's state, so a page reload opens them again.

import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { IStateDB } from '@jupyterlab/statedb';
import { SplitPanel, Widget } from '@lumino/widgets';

import * as api from './api';
import { button, el, icon, message, redraw } from './dom';
import type { Replacements, Selection } from './journals';
import { JournalSection, SectionHost } from './section';

const LIVE_MS = 500; // how often an open journal is asked what is new
const SAY_MS = 15000; // how long a message stays
const LIST_MS = 5000; // how often the list of journals under the server root is read again
const STATE_KEY = 'lithify-workbench:sidebar';
const WIDE = 440; // px: the width the sidebar first takes, where a fork's label shows its parameters

/** What the sidebar keeps across page reloads: the open journals, and the server whose
 * journals to open (``lithify lab PATH.db``) were opened already. */
interface Kept {
  journals: string[];
  offered: string;
  widened?: boolean; // the sidebar was given its first width (later, the user's stays)
}

export class Sidebar extends Widget implements SectionHost {
  selection: Selection | null = null;
  marked: Selection | null = null;
  private list = el('div', 'lithify-journals');
  private sections = el('div', 'lithify-sections');
  private message = el('div', 'lithify-message');
  private path = el('input', 'lithify-path');
  private open = new Map<string, JournalSection>();
  private timer = 0;
  private sayTimer = 0;
  private offered = '';
  private listed = 0; // when the journal list was last read (ms)
  private listing = false;
  private widened = false;

  constructor(
    readonly app: JupyterFrontEnd,
    readonly replacements: Replacements,
    private state: IStateDB | null = null
  ) {
    super();
    this.id = 'lithify-sidebar';
    this.addClass('lithify-sidebar');
    this.title.icon = icon;
    this.title.caption = 'lithify journals';
    const header = el('div', 'lithify-header');
    header.append(el('span', 'lithify-title', 'Journals'), button('', 'Refresh', () => void this.refresh()));
    const opener = el('div', 'lithify-opener');
    this.path.placeholder = 'path/to/journal.db or postgresql://…';
    this.path.onkeydown = (e: KeyboardEvent) => {
      if (e.key === 'Enter') {
        void this.openJournal(this.path.value.trim());
      }
    };
    const go = button('lithify-open-button', 'Open', () => void this.openJournal(this.path.value.trim()));
    opener.append(this.path, go);
    this.node.append(header, opener, this.message, this.list, this.sections);
    this.timer = window.setInterval(() => void this.live(), LIVE_MS);
  }

  /** Open the journals that were open before the page was reloaded, and, once per server,
   * those it was started to show (``lithify lab PATH.db``: the sidebar comes to the front). */
  async restore(): Promise<void> {
    const kept = this.state ? ((await this.state.fetch(STATE_KEY)) as Partial<Kept> | undefined) : undefined;
    this.offered = kept?.offered || '';
    this.widened = !!kept?.widened;
    for (const path of kept?.journals || []) {
      await this.openJournal(path, false, true);
    }
    try {
      const res = await api.journals();
      if (res.open.length && res.session !== this.offered) {
        this.offered = res.session;
        this.app.shell.activateById(this.id);
        for (const path of res.open) {
          await this.openJournal(path);
        }
        this.save();
      }
    } catch (e) {
      this.say(message(e));
    }
    this.node.dataset.restored = '1'; // what was open, and what the server asked for, is open
    this.widen();
  }

  /** The first time it shows in a workspace, the sidebar takes WIDE px from the main area
   * (JupyterLab gives a side panel 250 px: a fork's label was cut after its number). */
  private widen(): void {
    let side: Widget = this; // the split panel's child that holds the sidebar
    let split = this.parent;
    while (split && !(split instanceof SplitPanel)) {
      side = split;
      split = split.parent;
    }
    const read = this.node.dataset.restored === '1'; // whether it was widened before is known
    if (!read || this.widened || !this.isVisible || !(split instanceof SplitPanel)) {
      return;
    }
    this.widened = true;
    this.save();
    const i = split.widgets.indexOf(side);
    const total = split.node.clientWidth;
    const sizes = split.relativeSizes();
    const more = WIDE / total - sizes[i];
    if (i < 0 || i + 1 >= sizes.length || more <= 0 || sizes[i + 1] - more < 0.3) {
      return; // wide enough already, or too little room beside it
    }
    sizes[i] += more;
    sizes[i + 1] -= more;
    split.setRelativeSizes(sizes);
  }

  protected onAfterShow(): void {
    this.widen();
  }

  private save(): void {
    const kept: Kept = { journals: Array.from(this.open.keys()), offered: this.offered, widened: this.widened };
    void this.state?.save(STATE_KEY, { ...kept });
  }

  /** Select a branch of a journal (opened if it is not): its row in the tree, its facts and
   * events. */
  async selectBranch(journal: string, branch: number): Promise<void> {
    if (!this.open.has(journal)) {
      await this.openJournal(journal);
    }
    const section = this.open.get(journal);
    if (section && !(await section.selectBranch(branch))) {
      this.say(`${journal} has no branch ${branch}`);
    }
  }

  /** A message under the opener that fades after a while ('' clears it). */
  say(text: string): void {
    this.message.textContent = text;
    window.clearTimeout(this.sayTimer);
    if (text) {
      this.sayTimer = window.setTimeout(() => (this.message.textContent = ''), SAY_MS);
    }
  }

  private async live(): Promise<void> {
    if (!this.isVisible) {
      return;
    }
    if (Date.now() - this.listed > LIST_MS && !this.listing) {
      void this.refresh(true); // a journal a notebook or a terminal made shows up by itself
    }
    for (const section of this.open.values()) {
      await section.poll();
    }
  }

  /** List the journals under the server root again (``quiet``: the live re-read, which keeps
   * the rows already there and leaves the message alone). */
  async refresh(quiet = false): Promise<void> {
    this.listing = true;
    try {
      const res = await api.journals();
      const rows: HTMLElement[] = [];
      if (!res.journals.length) {
        const empty = el('div', 'lithify-empty', 'No journals (*.db) under the server root.');
        empty.dataset.key = '';
        rows.push(empty);
      }
      for (const j of res.journals) {
        const label = el('div', 'lithify-journal-label', `▸ ${j.path}`);
        label.hidden = this.open.has(j.path); // an open journal is named once: by its section
        label.dataset.journal = j.path;
        label.dataset.key = j.path;
        label.onclick = () => void this.openJournal(j.path, true);
        rows.push(label);
      }
      redraw(this.list, rows); // after the await: overlapping refreshes never duplicate
      if (!quiet) {
        this.message.textContent = '';
      }
    } catch (e) {
      if (!quiet) {
        this.message.textContent = message(e);
      }
    } finally {
      this.listed = Date.now();
      this.listing = false;
    }
  }

  /** Open a journal (or close it again from the list); a section per open journal. */
  async openJournal(path: string, toggle = false, quiet = false): Promise<void> {
    if (!path.includes('://')) {
      path = path.replace(/^(\.\/)+/, '').replace(/\/{2,}/g, '/'); // one journal, one name
    }
    if (!path) {
      this.say('Type the path of a journal (relative to the server root) or a PostgreSQL URL.');
      return;
    }
    const existing = this.open.get(path);
    if (existing) {
      if (toggle) {
        this.closeJournal(path);
      } else {
        existing.node.scrollIntoView();
      }
      return;
    }
    const section = new JournalSection(path, this, () => this.closeJournal(path));
    try {
      await section.start();
    } catch (e) {
      section.dispose();
      if (!quiet) {
        this.say(`${path}: ${message(e)}`);
      }
      return;
    }
    if (this.open.has(path)) {
      section.dispose();
      return; // opened twice at once (a restore and a click): one section
    }
    this.open.set(path, section);
    this.sections.append(section.node);
    this.say('');
    this.markOpen();
    this.save();
  }

  private closeJournal(path: string): void {
    this.open.get(path)?.dispose();
    this.open.delete(path);
    this.markOpen();
    this.save();
  }

  private markOpen(): void {
    this.list.querySelectorAll<HTMLElement>('.lithify-journal-label').forEach(n => {
      n.hidden = this.open.has(n.dataset.journal || '');
    });
  }

  dispose(): void {
    window.clearInterval(this.timer);
    super.dispose();
  }
}
