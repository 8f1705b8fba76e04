// The sidebar: open a journal by path or URL, every journal under the server root, and a
// section per open journal, each following its journal live.

import type { JupyterFrontEnd } from '@jupyterlab/application';
import { Widget } from '@lumino/widgets';

import * as api from './api';
import { button, el, icon, message } from './dom';
import type { Replacements, Selection } from './journals';
import { JournalSection, SectionHost } from './section';

const LIVE_MS = 500; // how often an open journal is asked what is new
const SAY_MS = 15000; // how long a message stays

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

  constructor(
    readonly app: JupyterFrontEnd,
    readonly replacements: Replacements
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
    for (const section of this.open.values()) {
      await section.poll();
    }
  }

  /** List the journals under the server root again. */
  async refresh(): Promise<void> {
    try {
      const res = await api.journals();
      this.list.textContent = ''; // after the await: overlapping refreshes never duplicate
      if (!res.journals.length) {
        this.list.append(el('div', 'lithify-empty', 'No journals (*.db) under the server root.'));
      }
      for (const j of res.journals) {
        const label = el('div', 'lithify-journal-label', `${this.open.has(j.path) ? '▾' : '▸'} ${j.path}`);
        label.dataset.journal = j.path;
        label.onclick = () => void this.openJournal(j.path, true);
        this.list.append(label);
      }
      this.message.textContent = '';
    } catch (e) {
      this.message.textContent = message(e);
    }
  }

  /** Open a journal (or close it again from the list); a section per open journal. */
  async openJournal(path: string, toggle = false): Promise<void> {
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
      this.say(`${path}: ${message(e)}`);
      return;
    }
    this.open.set(path, section);
    this.sections.append(section.node);
    this.say('');
    this.markOpen();
  }

  private closeJournal(path: string): void {
    this.open.get(path)?.node.remove();
    this.open.delete(path);
    this.markOpen();
  }

  private markOpen(): void {
    this.list.querySelectorAll<HTMLElement>('.lithify-journal-label').forEach(n => {
      const p = n.dataset.journal || '';
      n.textContent = `${this.open.has(p) ? '▾' : '▸'} ${p}`;
    });
  }

  dispose(): void {
    window.clearInterval(this.timer);
    super.dispose();
  }
}
