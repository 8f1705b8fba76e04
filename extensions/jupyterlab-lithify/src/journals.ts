// What the views of one journal share: the point a user picked, and the news that the file (or
// schema) behind a journal's name was replaced, so that every view of it starts over.

import type { Branch } from './types';

/** A point of a journal: an event on a branch. */
export interface Selection {
  journal: string;
  branch: number;
  seq: number;
}

/** Whether ``now`` can be what a journal that showed ``before`` has become. A journal only
 * grows: no branch disappears, none changes its parent, fork point or creation time, no head
 * goes back. Anything else is another journal at the same path. */
export function sameJournal(before: Branch[], now: Branch[]): boolean {
  const current = new Map(now.map(b => [b.id, b]));
  return before.every(b => {
    const n = current.get(b.id);
    return (
      n !== undefined &&
      n.parent === b.parent &&
      n.fork_seq === b.fork_seq &&
      n.created === b.created &&
      n.head >= b.head
    );
  });
}

type Listener = (journal: string) => void;

/** Announces that a journal was replaced; the views of that journal listen and start over. */
export class Replacements {
  private listeners = new Set<Listener>();

  /** Call ``fn`` for every replaced journal; returns the function that stops it. */
  listen(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  announce(journal: string): void {
    this.listeners.forEach(fn => fn(journal));
  }
}
