import { Api } from './api.js';
import { h, replaceChildren } from './dom.js';
import { href, parseRoute, type Route } from './routes.js';
import { forgetToken, savedToken } from './session.js';
import { pageTitle, showLoadError, type ViewContext } from './view.js';
import { signInView } from './views/sign-in.js';
import { homeView } from './views/home.js';
import { createAppView } from './views/create-app.js';
import { appInfoView } from './views/app-info.js';
import { appEnvView } from './views/app-env.js';
import { appServicesView } from './views/app-services.js';
import { appDomainsView } from './views/app-domains.js';
import { appScalingView } from './views/app-scaling.js';
import { appLogsView } from './views/app-logs.js';
import { addonsView } from './views/addons.js';
import { addonCreateView } from './views/addon-create.js';

const header = document.getElementById('top') as HTMLElement;
const main = document.getElementById('main') as HTMLElement;
const status = document.getElementById('status') as HTMLElement;

let leave: AbortController | undefined;

function announce(message: string): void {
  // Clearing first makes screen readers repeat a message that is said twice in a row.
  status.textContent = '';
  window.setTimeout(() => (status.textContent = message), 50);
}

function signOut(): void {
  forgetToken();
  delete header.dataset.user;
  window.location.hash = '#/';
  render();
}

function drawHeader(api: Api | undefined, userName?: string): void {
  replaceChildren(
    header,
    h('a', { class: 'brand', href: '#/' }, 'slipway'),
    api
      ? h(
          'nav',
          { 'aria-label': 'Main' },
          h('a', { href: '#/' }, 'Organisations'),
          userName ? h('span', { class: 'who' }, `Signed in as ${userName}`) : null,
          h('button', { type: 'button', class: 'link-button', onclick: signOut }, 'Sign out'),
        )
      : null,
  );
}

async function render(): Promise<void> {
  leave?.abort();
  leave = new AbortController();
  const signal = leave.signal;
  const token = savedToken();
  const route = parseRoute(window.location.hash);
  main.setAttribute('aria-busy', 'true');
  try {
    if (!token) {
      drawHeader(undefined);
      await signInView(main, render);
      return;
    }
    const api = new Api(token, signOut);
    const ctx: ViewContext = {
      api,
      main,
      signal,
      announce,
      navigate: (to: Route) => {
        window.location.hash = href(to);
      },
    };
    if (!header.dataset.user) {
      const me = await api.get<{ user: { name: string } }>('/v1/me');
      header.dataset.user = me.user.name;
    }
    drawHeader(api, header.dataset.user);
    await renderRoute(ctx, route);
  } catch (error) {
    if (!signal.aborted) showLoadError(main, error);
  } finally {
    if (!signal.aborted) {
      main.removeAttribute('aria-busy');
      // After a navigation, the keyboard and screen readers start from the new page's title.
      main.querySelector<HTMLElement>('h1')?.focus({ preventScroll: false });
    }
  }
}

function renderRoute(ctx: ViewContext, route: Route): Promise<void> {
  switch (route.page) {
    case 'home':
      return homeView(ctx);
    case 'create-app':
      return createAppView(ctx, route);
    case 'app-info':
      return appInfoView(ctx, route);
    case 'app-env':
      return appEnvView(ctx, route);
    case 'app-services':
      return appServicesView(ctx, route);
    case 'app-domains':
      return appDomainsView(ctx, route);
    case 'app-scaling':
      return appScalingView(ctx, route);
    case 'app-logs':
      return appLogsView(ctx, route);
    case 'addons':
      return addonsView(ctx, route);
    case 'addon-create':
      return addonCreateView(ctx, route);
    case 'not-found':
      replaceChildren(
        ctx.main,
        pageTitle('Page not found'),
        h('p', {}, `The console has no page ${route.path}. `, h('a', { href: '#/' }, 'Go to the organisations.')),
      );
      return Promise.resolve();
  }
}

window.addEventListener('hashchange', () => {
  // Plain in-page anchors (the skip link) are not pages.
  if (window.location.hash === '' || window.location.hash.startsWith('#/')) void render();
});
void render();
