/**
 * A tiny element builder. Text is always set as text, never parsed as HTML, so names and
 * log lines from the API cannot inject markup.
 */
export type Child = Node | string | number | null | undefined | false;
export type Attrs = Record<string, string | number | boolean | undefined | null | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (value === true) {
      el.setAttribute(key, '');
    } else {
      el.setAttribute(key, String(value));
    }
  }
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

let uniqueCounter = 0;
/** Ids that tie labels and error messages to their fields. */
export function uniqueId(prefix: string): string {
  uniqueCounter += 1;
  return `${prefix}-${uniqueCounter}`;
}

/** A labelled form field with a place for its error, wired with aria-describedby. */
export interface Field<T extends HTMLInputElement | HTMLSelectElement> {
  wrapper: HTMLDivElement;
  control: T;
  setError(message: string | undefined): void;
}

export function field<T extends HTMLInputElement | HTMLSelectElement>(label: string, control: T, help?: string): Field<T> {
  const id = control.id || uniqueId('field');
  control.id = id;
  const errorId = `${id}-error`;
  const helpId = `${id}-help`;
  const error = h('p', { id: errorId, class: 'field-error', hidden: true });
  const describedBy = help ? `${helpId} ${errorId}` : errorId;
  control.setAttribute('aria-describedby', describedBy);
  const wrapper = h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    control,
    help ? h('p', { id: helpId, class: 'help' }, help) : null,
    error,
  );
  return {
    wrapper,
    control,
    setError(message) {
      error.textContent = message ?? '';
      error.hidden = !message;
      if (message) control.setAttribute('aria-invalid', 'true');
      else control.removeAttribute('aria-invalid');
    },
  };
}

export function select(options: Array<{ value: string; label: string }>, attrs: Attrs = {}): HTMLSelectElement {
  return h('select', attrs, ...options.map((o) => h('option', { value: o.value }, o.label)));
}

/** A box for a form's overall error (role=alert so screen readers say it at once). */
export function errorBox(): { el: HTMLDivElement; show(message: string | undefined, hint?: string | null): void } {
  const el = h('div', { class: 'form-error', role: 'alert', hidden: true });
  return {
    el,
    show(message, hint) {
      replaceChildren(el, message ? h('p', {}, message) : null, message && hint ? h('p', { class: 'hint' }, hint) : null);
      el.hidden = !message;
    },
  };
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}
