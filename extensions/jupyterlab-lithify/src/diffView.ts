// Two points of a journal side by side: what changed between their states, and both states.

import { Widget } from '@lumino/widgets';

import * as api from './api';
import { el, message, pretty } from './dom';
import type { Replacements } from './journals';
import type { Change, Json } from './types';

export class DiffView extends Widget {
  private body = el('div', 'lithify-diff-body');
  private stopListening: () => void;

  constructor(
    readonly journal: string,
    readonly from: string,
    readonly to: string,
    replacements: Replacements
  ) {
    super();
    this.addClass('lithify-diff');
    this.title.label = `Diff ${from} → ${to}`;
    this.title.closable = true;
    this.node.append(el('h3', '', `${journal}: ${from} → ${to}`), this.body);
    // another journal at this name: the same two refs, read from it
    this.stopListening = replacements.listen(j => j === journal && void this.load());
    void this.load();
  }

  private async load(): Promise<void> {
    const nodes: HTMLElement[] = [];
    try {
      const d = await api.diff(this.journal, this.from, this.to);
      const changes = el('ul', 'lithify-changes');
      changes.append(...d.changes.map(change));
      if (!d.changes.length) {
        changes.append(el('li', '', 'The two states are identical.'));
      }
      const side = (p: { branch: number; seq: number }, state: Json) => {
        const box = el('div', 'lithify-side');
        box.append(el('div', 'lithify-label', `${p.branch}@${p.seq}`), el('pre', 'lithify-json', pretty(state)));
        return box;
      };
      const sides = el('div', 'lithify-sides');
      sides.append(side(d.from, d.states[0]), side(d.to, d.states[1]));
      nodes.push(el('div', 'lithify-subtitle', `${d.changes.length} change(s)`), changes, sides);
    } catch (e) {
      nodes.push(el('div', 'lithify-message', message(e)));
    }
    this.body.textContent = '';
    this.body.append(...nodes);
  }

  dispose(): void {
    this.stopListening();
    super.dispose();
  }
}

/** One change as a line: + added, − removed, ~ modified (before → after). */
function change(c: Change): HTMLElement {
  const item = el('li', `lithify-change lithify-change-${c.op}`);
  const sign = c.op === 'added' ? '+' : c.op === 'removed' ? '−' : '~';
  const show = (v: Json | undefined) => (typeof v === 'string' && v.includes('\n') ? pretty(v) : JSON.stringify(v));
  const detail =
    c.op === 'modified' ? `${show(c.before)} → ${show(c.after)}` : show(c.op === 'added' ? c.after : c.before);
  item.textContent = `${sign} ${c.path}  ${detail}`;
  item.style.whiteSpace = 'pre-wrap';
  return item;
}
