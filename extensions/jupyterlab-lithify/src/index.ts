// lithify in JupyterLab: the plugin and its commands. The views are in their own files (the
// sidebar and a section per open journal, the fork tree, the event list, the diff, a sweep's
// results, the sweep and optimize forms); api.ts talks to the server (workbench/server/, under
// /lithify/api/), whose JSON shapes are in types.ts. Everything is computed by the Python
// library behind that API; the extension only displays it and asks.

import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, MainAreaWidget, WidgetTracker } from '@jupyterlab/apputils';
import { IFileBrowserFactory } from '@jupyterlab/filebrowser';
import { IStateDB } from '@jupyterlab/statedb';

import * as api from './api';
import { DiffView } from './diffView';
import { Replacements } from './journals';
import { Results } from './results';
import { targetKey } from './selection';
import { Sidebar } from './sidebar';
import { optimizeFrom } from './optimizeForm';
import { forkSweep } from './sweepForm';
import type { Target } from './types';

/** A results target from a command's arguments. */
function targetOf(args: Record<string, unknown>, journal: string): Target {
  const branches = Array.isArray(args.branches) ? args.branches.map(Number).filter(n => !isNaN(n)) : null;
  return {
    journal,
    sweep: typeof args.sweep === 'number' ? args.sweep : null,
    branches: branches && branches.length ? branches : null,
    where: typeof args.where === 'string' && args.where ? args.where : null
  };
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'lithify-workbench:plugin',
  description: 'lithify journals: browse events, fork a sweep from any event, watch the results.',
  autoStart: true,
  requires: [ICommandPalette],
  optional: [ILayoutRestorer, IFileBrowserFactory, IStateDB],
  activate: (
    app: JupyterFrontEnd,
    palette: ICommandPalette,
    restorer: ILayoutRestorer | null,
    browsers: IFileBrowserFactory | null,
    state: IStateDB | null
  ) => {
    const replacements = new Replacements();
    // any answer about another journal at a name every view of it shows: they start over
    api.onReplaced(journal => replacements.announce(journal));
    const sidebar = new Sidebar(app, replacements, state);
    app.shell.add(sidebar, 'left', { rank: 600 });
    restorer?.add(sidebar, 'lithify-sidebar');
    void sidebar.refresh();
    void app.restored.then(() => sidebar.restore()); // the journals open before a reload
    const results = new Map<string, MainAreaWidget<Results>>();
    // results panels come back after a page reload, each on its selection
    const tracker = new WidgetTracker<MainAreaWidget<Results>>({ namespace: 'lithify-results' });
    void restorer?.restore(tracker, {
      command: 'lithify:open-results',
      args: panel => {
        const t = panel.content.target;
        return { journal: t.journal, sweep: t.sweep ?? null, branches: t.branches ?? null, where: t.where ?? null };
      },
      name: panel => targetKey(panel.content.target)
    });
    const { commands } = app;
    const show = () => app.shell.activateById(sidebar.id);

    commands.addCommand('lithify:open-sidebar', {
      label: 'Lithify: Show Journals',
      execute: () => {
        show();
        void sidebar.refresh();
      }
    });
    commands.addCommand('lithify:refresh', {
      label: 'Lithify: Refresh Journals',
      execute: () => sidebar.refresh()
    });
    commands.addCommand('lithify:open-journal', {
      label: 'Lithify: Open Journal',
      execute: async args => {
        show();
        await sidebar.openJournal(String(args.path ?? ''));
      }
    });
    const selectedDb = (): string | null => {
      const first = browsers?.tracker.currentWidget?.selectedItems().next();
      const path = first && !first.done ? first.value.path : null;
      return path && path.endsWith('.db') ? path : null;
    };
    commands.addCommand('lithify:open-in-lithify', {
      label: 'Open in lithify',
      isVisible: () => selectedDb() !== null,
      execute: async () => {
        const path = selectedDb();
        if (path) {
          show();
          await sidebar.openJournal(path);
        }
      }
    });
    app.contextMenu.addItem({
      command: 'lithify:open-in-lithify',
      selector: '.jp-DirListing-item[data-isdir="false"]',
      rank: 0
    });
    commands.addCommand('lithify:open-results', {
      label: 'Lithify: Open Results',
      caption: 'The results of a sweep, of branches, or of the branches a filter selects',
      execute: async args => {
        const journal = (args.journal as string | undefined) || sidebar.selection?.journal;
        if (!journal) {
          return;
        }
        const target = targetOf(args, journal);
        if (target.sweep === null && !target.branches && !target.where) {
          const all = (await api.sweeps(journal)).sweeps; // no selection: the newest sweep
          if (!all.length) {
            return;
          }
          target.sweep = all[all.length - 1].id;
        }
        const key = targetKey(target);
        const open = results.get(key);
        if (open && !open.isDisposed) {
          open.content.start(); // one panel per selection: show it again, polling afresh
          app.shell.activateById(open.id);
          return;
        }
        const panel = new MainAreaWidget({ content: new Results(app, target, replacements) });
        panel.id = `lithify-results-${Date.now()}`;
        results.set(key, panel);
        void tracker.add(panel);
        // a tab in the main area, as wide as a notebook's
        app.shell.add(panel, 'main', { mode: 'tab-after' });
        app.shell.activateById(panel.id);
      }
    });
    commands.addCommand('lithify:select-branch', {
      label: 'Lithify: Select Branch',
      execute: async args => {
        show();
        await sidebar.selectBranch(String(args.journal), Number(args.branch));
      }
    });
    commands.addCommand('lithify:diff', {
      label: 'Lithify: Diff Two Points',
      execute: args => {
        const content = new DiffView(String(args.journal), String(args.from), String(args.to), replacements);
        const view = new MainAreaWidget({ content });
        view.id = `lithify-diff-${Date.now()}`;
        app.shell.add(view, 'main', { mode: 'split-right' });
        app.shell.activateById(view.id);
      }
    });
    commands.addCommand('lithify:fork-sweep', {
      label: 'Fork sweep from here…',
      caption: 'Fork one branch per grid point at the selected event and run them',
      isEnabled: () => sidebar.selection !== null,
      execute: () => (sidebar.selection ? forkSweep(app, sidebar.selection) : undefined)
    });
    app.contextMenu.addItem({ command: 'lithify:fork-sweep', selector: '.lithify-event', rank: 0 });
    commands.addCommand('lithify:optimize', {
      label: 'Optimize from here…',
      caption: "Fork trials at the selected event whose parameters Optuna's sampler chooses",
      isEnabled: () => sidebar.selection !== null,
      execute: () => (sidebar.selection ? optimizeFrom(app, sidebar.selection) : undefined)
    });
    app.contextMenu.addItem({ command: 'lithify:optimize', selector: '.lithify-event', rank: 1 });
    for (const command of [
      'lithify:open-sidebar',
      'lithify:refresh',
      'lithify:open-journal',
      'lithify:fork-sweep',
      'lithify:optimize',
      'lithify:open-results'
    ]) {
      palette.addItem({ command, category: 'Lithify' });
    }
  }
};

export default plugin;
