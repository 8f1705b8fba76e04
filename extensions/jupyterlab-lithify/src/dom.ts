// DOM helpers every view uses: elements, the theme, and values printed for people.

import { LabIcon } from '@jupyterlab/ui-components';

export const icon = new LabIcon({
  name: 'lithify:journal',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><g class="jp-icon3" fill="#616161">' +
    '<circle cx="6" cy="5" r="2.5"/><circle cx="6" cy="19" r="2.5"/><circle cx="18" cy="12" r="2.5"/>' +
    '<rect x="5" y="5" width="2" height="14"/><path d="M6 9c0 3 4 3 10 3v2C9 14 6 13 6 9z"/></g></svg>'
});

/** An element with a class and text. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls = '',
  text = ''
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) {
    node.className = cls;
  }
  if (text) {
    node.textContent = text;
  }
  return node;
}

export function svgEl(tag: string, attrs: Record<string, string | number>): SVGElement {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) {
    node.setAttribute(k, String(v));
  }
  return node;
}

/** Make ``parent``'s children the ``fresh`` elements (just built, each with a ``data-key``),
 * keeping every element already there under the same key: updated in place when its markup
 * differs, never moved unless the order changed. A live view redraws every second or so; a
 * click whose press and release straddle a redraw is lost if its element was replaced (or
 * moved), so the element under the pointer must stay the same one. */
export function redraw(parent: Element, fresh: HTMLElement[]): void {
  const old = new Map<string, HTMLElement>();
  for (const n of Array.from(parent.children) as HTMLElement[]) {
    const key = n.dataset.key;
    if (key === undefined || old.has(key)) {
      n.remove();
    } else {
      old.set(key, n);
    }
  }
  const nodes = fresh.map(f => {
    const o = old.get(f.dataset.key ?? '');
    if (!o) {
      return f;
    }
    old.delete(f.dataset.key!);
    o.onclick = f.onclick;
    o.oncontextmenu = f.oncontextmenu;
    if (o.outerHTML !== f.outerHTML) {
      Array.from(o.attributes).forEach(a => o.removeAttribute(a.name));
      Array.from(f.attributes).forEach(a => o.setAttribute(a.name, a.value));
      o.replaceChildren(...Array.from(f.childNodes));
    }
    return o;
  });
  old.forEach(n => n.remove());
  nodes.forEach((n, i) => {
    if (parent.children[i] !== n) {
      parent.insertBefore(n, parent.children[i] ?? null);
    }
  });
}

/** A button in JupyterLab's style. */
export function button(cls: string, text: string, onClick: () => void): HTMLButtonElement {
  const b = el('button', `jp-Button lithify-button ${cls}`, text);
  b.onclick = onClick;
  return b;
}

export function darkTheme(): boolean {
  return document.body.dataset.jpThemeLight === 'false';
}

/** The message of anything thrown. */
export function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A value as readable text: JSON, but strings that hold newlines printed as their lines. */
export function pretty(value: unknown, indent = ''): string {
  const next = indent + '  ';
  if (typeof value === 'string') {
    if (value.includes('\n')) {
      return '|\n' + value.split('\n').map(line => next + line).join('\n');
    }
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    if (!value.length) {
      return '[]';
    }
    return '[\n' + value.map(v => next + pretty(v, next)).join(',\n') + '\n' + indent + ']';
  }
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (!entries.length) {
      return '{}';
    }
    return (
      '{\n' +
      entries.map(([k, v]) => `${next}${JSON.stringify(k)}: ${pretty(v, next)}`).join(',\n') +
      '\n' +
      indent +
      '}'
    );
  }
  return JSON.stringify(value);
}

/** A matrix or metric value for a person: times as dates, floats to 4 digits. */
export function readable(column: string, v: unknown): string {
  if (v === null || v === undefined) {
    return '';
  }
  if ((column === 'ts' || column.endsWith('_ts')) && typeof v === 'number') {
    return new Date(v).toISOString().replace('T', ' ').slice(0, 19);
  }
  if (typeof v === 'number' && !Number.isInteger(v)) {
    return String(+v.toPrecision(4));
  }
  return String(v);
}

/** Parameters as name=value words. */
export function paramText(params: Record<string, unknown>): string {
  return Object.entries(params)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
}
