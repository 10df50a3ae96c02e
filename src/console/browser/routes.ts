/** The console's pages, addressed by the URL fragment (`#/apps/<id>/env`), so `/` serves them all. */
export type Route =
  | { page: 'home' }
  | { page: 'create-app'; org?: string }
  | { page: 'app-info'; app: string }
  | { page: 'app-env'; app: string }
  | { page: 'app-services'; app: string }
  | { page: 'app-domains'; app: string }
  | { page: 'app-scaling'; app: string }
  | { page: 'app-logs'; app: string }
  | { page: 'addons'; org: string }
  | { page: 'addon-create'; org: string }
  | { page: 'not-found'; path: string };

export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#/, '');
  const [pathPart = '', queryPart = ''] = raw.split('?', 2);
  const query = new URLSearchParams(queryPart);
  const parts = pathPart
    .split('/')
    .filter(Boolean)
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
  const [a, b, c, d] = parts;
  if (parts.length === 0) return { page: 'home' };
  if (a === 'apps' && b === 'new' && parts.length === 2) return { page: 'create-app', org: query.get('org') ?? undefined };
  if (a === 'apps' && b && parts.length === 2) return { page: 'app-info', app: b };
  if (a === 'apps' && b && c === 'env' && parts.length === 3) return { page: 'app-env', app: b };
  if (a === 'apps' && b && c === 'services' && parts.length === 3) return { page: 'app-services', app: b };
  if (a === 'apps' && b && c === 'domains' && parts.length === 3) return { page: 'app-domains', app: b };
  if (a === 'apps' && b && c === 'scaling' && parts.length === 3) return { page: 'app-scaling', app: b };
  if (a === 'apps' && b && c === 'logs' && parts.length === 3) return { page: 'app-logs', app: b };
  if (a === 'orgs' && b && c === 'addons' && parts.length === 3) return { page: 'addons', org: b };
  if (a === 'orgs' && b && c === 'addons' && d === 'new' && parts.length === 4) return { page: 'addon-create', org: b };
  return { page: 'not-found', path: pathPart };
}

export function href(route: Route): string {
  const e = encodeURIComponent;
  switch (route.page) {
    case 'home':
      return '#/';
    case 'create-app':
      return route.org ? `#/apps/new?org=${e(route.org)}` : '#/apps/new';
    case 'app-info':
      return `#/apps/${e(route.app)}`;
    case 'app-env':
      return `#/apps/${e(route.app)}/env`;
    case 'app-services':
      return `#/apps/${e(route.app)}/services`;
    case 'app-domains':
      return `#/apps/${e(route.app)}/domains`;
    case 'app-scaling':
      return `#/apps/${e(route.app)}/scaling`;
    case 'app-logs':
      return `#/apps/${e(route.app)}/logs`;
    case 'addons':
      return `#/orgs/${e(route.org)}/addons`;
    case 'addon-create':
      return `#/orgs/${e(route.org)}/addons/new`;
    case 'not-found':
      return `#${route.path}`;
  }
}
