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
