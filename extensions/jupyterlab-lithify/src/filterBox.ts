// A filter expression box (``budget >= 1000 and recall > 0.5``, ``status == failed``,
// ``sweep == 3``): Enter asks the server (the expression is parsed and evaluated there, with
// polars), the answer or the server's one-line message shows under it; empty clears.

import { el, message } from './dom';

export class FilterBox {
  readonly node = el('div', 'lithify-filter');
  readonly input = el('input', 'lithify-filter-input');
  private said = el('div', 'lithify-filter-message');
  /** An expression was applied (or cleared): ``text`` says which now. */
  onApplied: () => void = () => undefined;

  /** ``apply`` runs an expression ('' to clear) and says what it selected. */
  constructor(
    placeholder: string,
    private apply: (text: string) => Promise<string>
  ) {
    this.input.placeholder = placeholder;
    this.input.spellcheck = false;
    this.input.title =
      'A filter: NAME OP VALUE (== != < <= > >=, in (a, b)), joined by and, or, not; ' +
      'names are parameters, metrics, status, sweep, branch, name. Enter applies it.';
    this.input.onkeydown = (e: KeyboardEvent) => {
      if (e.key === 'Enter') {
        void this.run();
      } else if (e.key === 'Escape') {
        this.input.value = '';
        void this.run();
      }
    };
    this.node.append(this.input, this.said);
  }

  /** The expression applied now ('' for none). */
  get text(): string {
    return this.node.dataset.applied || '';
  }

  /** Apply what the box holds. */
  async run(): Promise<void> {
    const text = this.input.value.trim();
    try {
      this.said.textContent = await this.apply(text);
      this.said.classList.remove('lithify-filter-error');
      this.node.dataset.applied = text;
      this.onApplied();
    } catch (e) {
      this.said.textContent = message(e);
      this.said.classList.add('lithify-filter-error');
    }
  }

  /** Empty, nothing applied. */
  clear(): void {
    this.input.value = '';
    this.said.textContent = '';
    this.said.classList.remove('lithify-filter-error');
    delete this.node.dataset.applied;
  }
}
