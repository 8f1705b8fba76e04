// A sweep's state in its results panel: progress (red when a fork failed), Cancel / Rerun
// failed / Resume enabled only when they apply, and the failed forks grouped by error, each
// with its cell, traceback tail and a link to its executed notebook.

import type { JupyterFrontEnd } from '@jupyterlab/application';

import * as api from './api';
import { el, message } from './dom';
import type { ForkState, SweepState } from './types';

/** The sweep actions that apply now: cancel while a coordinator runs it (this server, or
 * another process: the server asks it through the journal); rerun when it has stopped with
 * failed forks; resume when the server says it has something to resume (a grid's forks that
 * did not finish; a study's trials that did not end, or trials it has yet to ask for). */
export function applicable(sweep: SweepState): { cancel: boolean; rerun: boolean; resume: boolean } {
  const failed = sweep.forks.some(f => f.status === 'failed');
  return { cancel: sweep.running, rerun: !sweep.running && failed, resume: !sweep.running && sweep.resume === null };
}

export class SweepStatus {
  readonly node = el('div', 'lithify-sweep-status');
  private status = el('div', 'lithify-status');
  private bar = el('div', 'lithify-progress');
  private fill = el('div', 'lithify-progress-bar');
  private failures = el('div', 'lithify-failures');
  private said = el('div', 'lithify-message');
  private cancelButton: HTMLButtonElement;
  private rerunButton: HTMLButtonElement;
  private resumeButton: HTMLButtonElement;

  constructor(
    private app: JupyterFrontEnd,
    journal: string,
    sweep: number,
    changed: () => void
  ) {
    this.bar.append(this.fill);
    const actions = el('div', 'lithify-actions');
    const action = (cls: string, text: string, call: (j: string, s: number) => Promise<unknown>) => {
      const b = el('button', `jp-Button lithify-button ${cls}`, text);
      b.disabled = true; // until the sweep's state says it applies
      b.onclick = async () => {
        b.disabled = true;
        try {
          await call(journal, sweep);
          this.said.textContent = '';
          changed();
        } catch (e) {
          this.said.textContent = message(e);
        }
      };
      actions.append(b);
      return b;
    };
    this.cancelButton = action('lithify-cancel', 'Cancel', api.cancelSweep);
    this.rerunButton = action('lithify-rerun', 'Rerun failed', api.rerunSweep);
    this.resumeButton = action('lithify-resume', 'Resume', api.resumeSweep);
    this.node.append(this.status, this.bar, actions, this.said, this.failures);
  }

  /** Say something in the status line (a sweep that is gone, an error). */
  say(text: string): void {
    this.status.textContent = text;
  }

  reset(): void {
    this.status.textContent = '';
    delete this.status.dataset.finished;
    delete this.status.dataset.failed;
    this.fill.style.width = '0%';
    this.bar.classList.remove('lithify-progress-failed');
    this.failures.textContent = '';
    this.said.textContent = '';
    for (const b of [this.cancelButton, this.rerunButton, this.resumeButton]) {
      b.disabled = true;
    }
  }

  show(mine: SweepState): void {
    const forks = mine.forks;
    const count = (s: string) => forks.filter(f => f.status === s).length;
    const done = count('finished');
    const failed = count('failed');
    const cancelled = count('cancelled');
    const pruned = count('pruned');
    const planned = Math.max(mine.planned ?? 0, forks.length); // a study forks as it goes
    this.status.textContent = `${done}/${planned} forks finished${failed ? ` · ${failed} failed` : ''}${
      pruned ? ` · ${pruned} pruned` : ''
    }${cancelled ? ` · ${cancelled} cancelled` : ''}${mine.running ? ' · running' : ''}`;
    this.status.dataset.finished = String(done);
    this.status.dataset.failed = String(failed);
    this.fill.style.width = `${planned ? (100 * (done + failed + pruned)) / planned : 0}%`;
    this.bar.classList.toggle('lithify-progress-failed', failed > 0);
    this.showFailures(forks);
    const can = applicable(mine);
    this.cancelButton.disabled = !can.cancel;
    this.cancelButton.title = can.cancel ? 'Stop its running forks and skip the rest' : 'It is not running';
    this.rerunButton.disabled = !can.rerun;
    this.rerunButton.title = can.rerun
      ? 'Run its failed forks again'
      : mine.running
        ? 'It is running'
        : 'No fork failed';
    this.resumeButton.disabled = !can.resume;
    this.resumeButton.title = can.resume ? 'Run what is left of it' : (mine.resume ?? 'It is running');
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
}
