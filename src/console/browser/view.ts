import type { Api } from './api.js';
import { ApiError } from './api.js';
import type { Route } from './routes.js';
import { h, replaceChildren } from './dom.js';

/** What a page gets: the API, where to draw, and a signal aborted when the user leaves it. */
export interface ViewContext {
  api: Api;
  main: HTMLElement;
  signal: AbortSignal;
  navigate(route: Route): void;
  /** Says a short message to screen readers (and shows it in the status line). */
  announce(message: string): void;
}

export type View<R extends Route = Route> = (ctx: ViewContext, route: R) => Promise<void>;

/** The page heading that receives focus after each navigation. */
export function pageTitle(text: string): HTMLHeadingElement {
  document.title = `${text} · slipway`;
  return h('h1', { tabindex: -1, class: 'page-title' }, text);
}

/** Shows an error that stopped a page from loading, with the API's hint when it gave one. */
export function showLoadError(main: HTMLElement, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  const hint = error instanceof ApiError ? error.hint : null;
  replaceChildren(
    main,
    pageTitle('Something went wrong'),
    h('div', { class: 'form-error', role: 'alert' }, h('p', {}, message), hint ? h('p', { class: 'hint' }, hint) : null),
    h('p', {}, h('a', { href: '#/' }, 'Back to the organisations')),
  );
}

/** Repeats `task` every `ms` until the page is left; errors wait for the next round. */
export function every(ms: number, signal: AbortSignal, task: () => Promise<void>): void {
  const tick = async () => {
    if (signal.aborted) return;
    try {
      await task();
    } catch {
      /* a failed refresh is retried next round */
    }
    if (!signal.aborted) timer = window.setTimeout(tick, ms);
  };
  let timer = window.setTimeout(tick, ms);
  signal.addEventListener('abort', () => window.clearTimeout(timer));
}
