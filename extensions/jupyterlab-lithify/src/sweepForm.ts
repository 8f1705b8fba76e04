// "Fork sweep from here…": a form that starts from what the server says a sweep of this journal
// runs (its agent's grid, runner, template, workers), and sends only what the user changed, so
// the server's rule decides the rest, the same rule the CLI and the widgets follow.

import type { JupyterFrontEnd } from '@jupyterlab/application';
import { Dialog, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import * as api from './api';
import { el, message } from './dom';
import type { Selection } from './journals';
import type { SweepDefaults, SweepRequest } from './types';

const FALLBACK_RUNNERS = ['pool', 'process', 'papermill', 'warm'];

type Field = HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;

/** The form's fields, each with the value it opened with. */
class SweepForm extends Widget {
  private fields = new Map<string, { input: Field; initial: string }>();

  constructor(sel: Selection, d: SweepDefaults | null, problem: string) {
    super();
    this.addClass('lithify-form');
    this.node.append(el('div', 'lithify-subtitle', `${sel.journal} · branch ${sel.branch} · at seq ${sel.seq}`));
    this.node.append(el('div', 'lithify-form-about', about(d, problem)));
    const grid = el('textarea');
    grid.placeholder = d?.grid_text
      ? 'NAME=V1,V2,… one parameter a line'
      : "NAME=V1,V2,… one parameter a line (this journal's agent names no default grid)";
    this.add('grid', grid, d?.grid_text ?? '');
    const seeds = el('input');
    seeds.type = 'number';
    seeds.min = '1';
    seeds.placeholder = 'runs of each grid point (empty: one)';
    this.add('seeds', seeds, d?.seeds != null ? String(d.seeds) : '');
    const workers = el('input');
    workers.type = 'number';
    workers.min = '1';
    this.add('workers', workers, d ? String(d.workers) : '');
    const runner = el('select');
    const runners = d?.runners.length ? d.runners : FALLBACK_RUNNERS;
    runners.forEach(r => runner.append(new Option(r, r)));
    this.add('runner', runner, d?.runner ?? runners[0]);
    const notebook = el('input');
    notebook.placeholder = "papermill / warm template (empty: the agent's)";
    this.add('notebook', notebook, d?.notebook ?? '');
    const scheduler = el('input');
    scheduler.placeholder = 'dask: tcp://host:8786 (empty: a LocalCluster)';
    this.add('scheduler', scheduler, '');
  }

  private add(name: string, input: Field, initial: string): void {
    input.name = name;
    input.value = initial;
    this.fields.set(name, { input, initial });
    const row = el('label', 'lithify-form-row');
    row.append(el('span', '', name), input);
    this.node.append(row);
  }

  /** A field the user changed (and did not empty), else undefined: not sent. */
  private given(name: string): string | undefined {
    const f = this.fields.get(name)!;
    const value = f.input.value.trim();
    return value !== f.initial.trim() && value !== '' ? value : undefined;
  }

  /** The request: the point, and only the fields the user filled in. */
  request(sel: Selection): SweepRequest {
    const req: SweepRequest = { journal: sel.journal, branch: sel.branch, at: sel.seq };
    const number = (name: 'seeds' | 'workers') => {
      const v = this.given(name);
      if (v !== undefined) {
        req[name] = Number(v);
      }
    };
    number('seeds');
    number('workers');
    for (const name of ['grid', 'runner', 'notebook', 'scheduler'] as const) {
      const v = this.given(name);
      if (v !== undefined) {
        req[name] = v;
      }
    }
    return req;
  }
}

/** One line on what runs when the user changes nothing. */
function about(d: SweepDefaults | null, problem: string): string {
  if (!d) {
    return `The server gave no defaults (${problem}): fill in the grid and how to run it.`;
  }
  const agent = d.agent ? `agent ${d.agent}` : 'no agent';
  const what = d.notebook ? `template ${d.notebook}` : d.fn ? `fork function ${d.fn}` : 'nothing to run named';
  return `This journal: ${agent}; by default the ${d.runner} runner with ${what}.`;
}

/** Ask for a sweep forked at ``sel``, start it and open its results. */
export async function forkSweep(app: JupyterFrontEnd, sel: Selection): Promise<void> {
  let defaults: SweepDefaults | null = null;
  let problem = '';
  try {
    defaults = await api.defaults(sel.journal, sel.branch, sel.seq);
  } catch (e) {
    problem = message(e);
  }
  const form = new SweepForm(sel, defaults, problem);
  const result = await showDialog({
    title: 'Fork a sweep from this event',
    body: form,
    buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Start sweep' })]
  });
  if (!result.button.accept) {
    return;
  }
  try {
    const started = await api.startSweep(form.request(sel));
    await app.commands.execute('lithify:open-results', { journal: sel.journal, sweep: started.sweep });
  } catch (e) {
    await showDialog({
      title: 'The sweep did not start',
      body: message(e),
      buttons: [Dialog.okButton()]
    });
  }
}
