// A branch's notes and artifacts in its facts box: the notes (each with its seq), a box to
// write one (journaled as an event on the branch: POST note), and the artifacts, each a link
// that downloads its bytes (GET artifact, checked against their digest by the server).

import * as api from './api';
import { button, el, message } from './dom';
import type { ArtifactJson, NoteJson } from './types';

function size(n: number): string {
  if (n < 1024) {
    return `${n} B`;
  }
  const units = ['KiB', 'MiB', 'GiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

function noteList(notes: NoteJson[]): HTMLElement {
  const list = el('ul', 'lithify-notes');
  for (const n of notes) {
    const item = el('li', 'lithify-note', n.text);
    item.title = `${n.branch}@${n.seq} · ${new Date(n.ts).toLocaleString()}`;
    list.append(item);
  }
  return list;
}

/** The notes and artifacts of ``branch`` as facts rows (dt/dd pairs) appended to ``dl``;
 * ``changed`` is called after a note was written (the caller reads the branch again). */
export function annotate(
  dl: HTMLElement,
  journal: string,
  branch: number,
  notes: NoteJson[],
  artifacts: ArtifactJson[],
  changed: () => void
): void {
  const box = el('div', 'lithify-annotations');
  box.append(noteList(notes));
  const input = el('input', 'lithify-note-input');
  input.placeholder = 'a note on this branch (Enter adds it)';
  const said = el('div', 'lithify-note-message');
  const add = async (): Promise<void> => {
    const text = input.value.trim();
    if (!text) {
      return;
    }
    input.disabled = true;
    try {
      await api.addNote(journal, branch, text);
      input.value = '';
      said.textContent = '';
      changed();
    } catch (e) {
      said.textContent = message(e);
    } finally {
      input.disabled = false;
    }
  };
  input.onkeydown = (e: KeyboardEvent) => {
    if (e.key === 'Enter') {
      void add();
    }
  };
  box.append(input, button('lithify-note-add', 'Add note', () => void add()), said);
  dl.append(el('dt', '', 'notes'), el('dd', '', ''));
  (dl.lastElementChild as HTMLElement).append(box);
  if (!artifacts.length) {
    return;
  }
  const files = el('ul', 'lithify-artifacts');
  for (const a of artifacts) {
    const link = el('a', 'lithify-artifact', a.name);
    link.href = api.artifactFile(journal, branch, a.name);
    link.download = a.name;
    link.title = `${a.media_type} · blake3 ${a.hash.slice(0, 16)}… · ${a.branch}@${a.seq}`;
    const item = el('li', '');
    item.append(link, el('span', 'lithify-artifact-size', ` ${size(a.size)}`));
    files.append(item);
  }
  dl.append(el('dt', '', 'artifacts'), el('dd', '', ''));
  (dl.lastElementChild as HTMLElement).append(files);
}
