// "Optimize from here…": an adaptive sweep forked at an event (Optuna's sampler and pruner
// choose each fork's parameters from the results so far). The form starts from what the server
// says (GET defaults' study: a space spanning the agent's default grid, its metric, the
// samplers and pruners there are); a study the server refuses comes back to the form with the
// server's message and the values as they were; a started one opens its results, and the
// sidebar's fork tree shows it like any sweep (kind optimize).

import type { JupyterFrontEnd } from '@jupyterlab/application';
import { Dialog, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import * as api from './api';
import { el, message } from './dom';
import type { Selection } from './journals';
import type { OptimizeRequest, SweepDefaults } from './types';

// The choices when the server gave no defaults (the library's names: sweep.SAMPLERS, PRUNERS).
const FALLBACK = {
  samplers: ['tpe', 'random', 'grid', 'cmaes', 'nsga2', 'qmc'],
  pruners: ['none', 'median', 'percentile', 'asha', 'hyperband'],
  directions: ['maximize', 'minimize'],
  runners: ['pool', 'process', 'papermill', 'warm']
};

type Field = HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;
type Values = Record<string, string>;

/** What the form shows first: the server's defaults. */
function initial(d: SweepDefaults | null): Values {
  const s = d?.study;
  return {
    space: s?.space_text ?? '',
    objective: s?.objective ?? '',
    direction: s?.direction ?? 'maximize',
    forks: String(s?.forks ?? 20),
    workers: d ? String(d.workers) : '',
    sampler: s?.sampler ?? 'tpe',
    pruner: s?.pruner ?? 'median',
    seed: '',
    runner: d?.runner ?? ''
  };
}

class OptimizeForm extends Widget {
  private fields = new Map<string, Field>();

  constructor(sel: Selection, d: SweepDefaults | null, values: Values, problem: string, refused: string) {
    super();
    this.addClass('lithify-form');
    this.addClass('lithify-optimize-form');
    this.node.append(el('div', 'lithify-subtitle', `${sel.journal} · branch ${sel.branch} · at seq ${sel.seq}`));
    if (refused) {
      this.node.append(el('div', 'lithify-form-error', refused)); // the server's reason
    }
    this.node.append(el('div', 'lithify-form-about', about(d, problem)));
    const space = el('textarea');
    space.rows = 3;
    space.placeholder = 'one parameter a line: budget=int:100:6000:log, temperature=float:0:1, retrieval=cat:lexical,fused';
    this.add('space', space, values.space);
    const objective = el('input');
    objective.placeholder = 'the metric to optimize';
    objective.title = 'The metric to optimize: its last value on each fork';
    const s = d?.study;
    const runners = d?.runners.length ? d.runners : FALLBACK.runners;
    const seed = el('input');
    seed.placeholder = '(random)';
    seed.title = 'A whole number makes the sampling repeatable';
    // two short fields a line, so the whole form fits the dialog
    this.pair(['objective', objective, values.objective], ['direction', choices(s?.directions ?? FALLBACK.directions), values.direction]);
    this.pair(['forks', number('trials'), values.forks], ['workers', number('at once'), values.workers]);
    this.pair(['sampler', choices(s?.samplers ?? FALLBACK.samplers), values.sampler], ['pruner', choices(s?.pruners ?? FALLBACK.pruners), values.pruner]);
    this.pair(['seed', seed, values.seed], ['runner', choices(runners), values.runner || runners[0]]);
  }

  private add(name: string, input: Field, value: string, into: HTMLElement = this.node): void {
    input.name = name;
    input.value = value;
    this.fields.set(name, input);
    const row = el('label', 'lithify-form-row');
    row.append(el('span', '', name), input);
    into.append(row);
  }

  private pair(...fields: [string, Field, string][]): void {
    const line = el('div', 'lithify-form-pair');
    fields.forEach(([name, input, value]) => this.add(name, input, value, line));
    this.node.append(line);
  }

  /** Every field as the user left it. */
  values(): Values {
    const out: Values = {};
    this.fields.forEach((input, name) => (out[name] = input.value));
    return out;
  }

  /** The request: the point and the study; empty optional fields are left to the server. */
  request(sel: Selection): OptimizeRequest {
    const v = this.values();
    const req: OptimizeRequest = {
      journal: sel.journal,
      branch: sel.branch,
      at: sel.seq,
      space: v.space,
      objective: v.objective.trim(),
      direction: v.direction,
      forks: v.forks.trim(),
      sampler: v.sampler,
      pruner: v.pruner
    };
    for (const name of ['workers', 'seed', 'runner'] as const) {
      const given = v[name].trim();
      if (given !== '') {
        req[name] = given;
      }
    }
    return req;
  }
}

function choices(options: string[]): HTMLSelectElement {
  const select = el('select');
  options.forEach(o => select.append(new Option(o, o)));
  return select;
}

function number(placeholder: string): HTMLInputElement {
  const input = el('input');
  input.type = 'number';
  input.min = '1';
  input.placeholder = placeholder;
  return input;
}

/** One line on where the form started from. */
function about(d: SweepDefaults | null, problem: string): string {
  if (!d) {
    return `The server gave no defaults (${problem}): fill in the space and the objective.`;
  }
  const agent = d.agent ? `agent ${d.agent}` : 'no agent';
  const start = d.study.space.length ? "a space spanning the agent's grid" : 'no default space';
  return `This journal: ${agent}; ${start}. The sampler picks each fork's parameters from the results so far; the pruner stops hopeless forks.`;
}

/** Ask for a study forked at ``sel`` until the server starts one (or the user cancels), then
 * open its results. */
export async function optimizeFrom(app: JupyterFrontEnd, sel: Selection): Promise<void> {
  let defaults: SweepDefaults | null = null;
  let problem = '';
  try {
    defaults = await api.defaults(sel.journal, sel.branch, sel.seq);
  } catch (e) {
    problem = message(e);
  }
  let values = initial(defaults);
  let refused = '';
  for (;;) {
    const form = new OptimizeForm(sel, defaults, values, problem, refused);
    const result = await showDialog({
      title: 'Optimize from this event',
      body: form,
      buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Start study' })]
    });
    if (!result.button.accept) {
      return;
    }
    values = form.values();
    try {
      const started = await api.startOptimize(form.request(sel));
      await app.commands.execute('lithify:open-results', { journal: sel.journal, sweep: started.sweep });
      return;
    } catch (e) {
      refused = message(e); // shown in the form again, with what the user wrote
    }
  }
}
