// How a results panel names and follows its selection: the name of a sweep, branches or a
// filter's branches; one panel per selection (its key); whether a sweep seen now can be the one
// seen before; a fingerprint of a table's rows (a chart from other rows is drawn again).

import type { Target } from './types';

const SWEEP_NAMES: { [kind: string]: string } = { optimize: 'Study', evolve: 'Evolution' };

/** How a panel names its selection; a sweep by its kind once known (a study, an evolution). */
export function describe(t: Target, kind?: string): string {
  const what =
    t.sweep !== null && t.sweep !== undefined
      ? `${SWEEP_NAMES[kind ?? ''] ?? 'Sweep'} ${t.sweep}`
      : t.branches && t.branches.length
        ? `${t.branches.length} branch${t.branches.length === 1 ? '' : 'es'}`
        : 'Branches';
  return `${what}${t.where ? ` where ${t.where}` : ''}`;
}

/** Whether a sweep seen as ``now`` can be what was seen as ``before`` (fork point, then its
 * forks): the same fork point, and every fork seen before still there (a study forks its
 * trials one at a time). Anything else is another sweep under that id. */
export function follows(before: string, now: string): boolean {
  const [point, forks] = before.split(':');
  const [pointNow, forksNow] = now.split(':');
  if (point !== pointNow) {
    return false;
  }
  const there = new Set((forksNow || '').split(',').filter(Boolean));
  return (forks || '').split(',').filter(Boolean).every(b => there.has(b));
}

/** A short fingerprint of a table's rows: a chart drawn from other rows is drawn again. */
export function fingerprint(rows: unknown[][]): string {
  const text = JSON.stringify(rows);
  let h = 0;
  for (let i = 0; i < text.length; i++) {
    h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0;
  }
  return `${rows.length}.${(h >>> 0).toString(36)}`;
}

/** One panel per selection: its key. */
export function targetKey(t: Target): string {
  return `${t.journal}#${t.sweep ?? ''}#${(t.branches || []).join(',')}#${t.where || ''}`;
}
