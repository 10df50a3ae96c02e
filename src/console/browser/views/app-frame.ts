import type { App } from '../api.js';
import { enc } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { href } from '../routes.js';
import { pageTitle, type ViewContext } from '../view.js';

type Tab = 'app-info' | 'app-env' | 'app-services' | 'app-domains' | 'app-scaling' | 'app-logs';

const TABS: Array<{ page: Tab; label: string }> = [
  { page: 'app-info', label: 'Information' },
  { page: 'app-env', label: 'Environment variables' },
  { page: 'app-services', label: 'Service dependencies' },
  { page: 'app-domains', label: 'Domain names' },
  { page: 'app-scaling', label: 'Scaling' },
  { page: 'app-logs', label: 'Logs' },
];

/**
 * The frame shared by an application's pages: its name, where it belongs, and the menu of
 * its pages. Returns the application and the element the page draws into.
 */
export async function appFrame(ctx: ViewContext, appId: string, current: Tab): Promise<{ app: App; body: HTMLElement }> {
  const { app } = await ctx.api.get<{ app: App }>(`/v1/apps/${enc(appId)}`);
  const body = h('div', { class: 'app-body' });
  const tabLabel = TABS.find((t) => t.page === current)!.label;
  const title = pageTitle(`${app.name}: ${tabLabel}`);
  replaceChildren(
    ctx.main,
    h('p', { class: 'crumbs' }, h('a', { href: href({ page: 'home' }) }, app.org_name ?? 'Organisation'), ' / ', app.name),
    title,
    h(
      'nav',
      { class: 'tabs', 'aria-label': `Pages of ${app.name}` },
      ...TABS.map((t) =>
        h('a', { href: href({ page: t.page, app: app.id }), 'aria-current': t.page === current ? 'page' : undefined }, t.label),
      ),
    ),
    body,
  );
  return { app, body };
}
