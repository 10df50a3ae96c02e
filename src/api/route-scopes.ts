import type { TokenScope } from '../store/api-tokens.js';

/** What a route needs of the token presented: none at all (`public`), or at least this scope. */
export type RouteAccess = TokenScope | 'public';

/**
 * The least token scope of every route of the API, by `METHOD /pattern` (store/api-tokens.ts
 * says what each scope is). This table is the only place a route's scope is stated: a route's
 * declaration names its key here (route() in route-spec.ts, which does not compile with a key
 * missing from it), the router refuses to start with a route missing from it, and
 * route-scopes.test.ts fails on one, so a new route cannot exist without a decided scope.
 *
 * `read` is for metadata only: nothing that changes state, nothing that shows a secret. Reads
 * that show one (variables, an add-on's credentials, a backup's data, what an app exposes) need
 * `full`, as does `run` (its command sees every variable). `deploy` adds deployments, restarts,
 * rollbacks and cancelling them. Routes that answer receiver URLs to `read` and `deploy` tokens
 * (drains, webhooks) show them with their secret-bearing parts hidden (receiver-urls.ts).
 */
export const ROUTE_SCOPES = {
  // Daemon
  'GET /v1/health': 'public',
  'GET /v1/openapi.json': 'public',
  'GET /metrics': 'read',
  'GET /v1/system/status': 'read',
  'POST /v1/system/stop': 'full',
  'POST /v1/system/secrets-key/rotate': 'full',
  'POST /v1/system/backup': 'full',

  // Users, organisations, tokens, keys
  'GET /v1/me': 'read',
  'GET /v1/me/email': 'read',
  'PUT /v1/me/email': 'full',
  'POST /v1/users': 'full',
  'GET /v1/orgs': 'read',
  'POST /v1/orgs': 'full',
  'GET /v1/orgs/:org': 'read',
  'GET /v1/orgs/:org/members': 'read',
  'POST /v1/orgs/:org/members': 'full',
  'DELETE /v1/orgs/:org/members/:user': 'full',
  'GET /v1/orgs/:org/quota': 'read',
  'PUT /v1/orgs/:org/quota': 'full',
  'GET /v1/tokens': 'read',
  // A new credential: a leaked read token must not mint siblings that outlive its revocation.
  'POST /v1/tokens': 'deploy',
  'DELETE /v1/tokens/:token': 'full',
  'GET /v1/ssh-keys': 'read',
  'POST /v1/ssh-keys': 'full',
  'DELETE /v1/ssh-keys/:key': 'full',

  // Applications
  'GET /v1/app-types': 'read',
  'GET /v1/runtimes': 'read',
  'GET /v1/apps': 'read',
  'POST /v1/apps': 'full',
  'GET /v1/apps/:app': 'read',
  'DELETE /v1/apps/:app': 'full',
  'GET /v1/apps/:app/env': 'full', // the variables' values
  'PUT /v1/apps/:app/env': 'full',
  'PUT /v1/apps/:app/env/:name': 'full',
  'DELETE /v1/apps/:app/env/:name': 'full',
  'GET /v1/apps/:app/published-config': 'full', // values of variables it exposes
  'PUT /v1/apps/:app/published-config': 'full',
  'PUT /v1/apps/:app/published-config/:name': 'full',
  'DELETE /v1/apps/:app/published-config/:name': 'full',
  'GET /v1/apps/:app/config': 'read',
  'PUT /v1/apps/:app/config/:name': 'full',
  'GET /v1/apps/:app/scale': 'read',
  'PUT /v1/apps/:app/scale': 'full',
  'PUT /v1/apps/:app/instances': 'full',
  'GET /v1/apps/:app/services': 'read',
  'POST /v1/apps/:app/services/addons': 'full',
  'DELETE /v1/apps/:app/services/addons/:addon': 'full',
  'POST /v1/apps/:app/services/apps': 'full',
  'DELETE /v1/apps/:app/services/apps/:target': 'full',
  'GET /v1/apps/:app/domains': 'read',
  'POST /v1/apps/:app/domains': 'full',
  'DELETE /v1/apps/:app/domains/:fqdn': 'full',
  'PUT /v1/apps/:app/domains/:fqdn/certificate': 'full',
  'DELETE /v1/apps/:app/domains/:fqdn/certificate': 'full',
  'PUT /v1/apps/:app/favourite-domain': 'full',
  'DELETE /v1/apps/:app/favourite-domain': 'full',

  // Deployments and what runs
  'GET /v1/apps/:app/plan': 'read', // secret variables redacted, as in the deploy log
  'GET /v1/apps/:app/deployments': 'read',
  'POST /v1/apps/:app/deployments': 'deploy',
  'POST /v1/apps/:app/deployments/cancel': 'deploy',
  'GET /v1/apps/:app/deployments/:deployment': 'read',
  'GET /v1/apps/:app/deployments/:deployment/logs': 'read',
  'POST /v1/apps/:app/restart': 'deploy',
  'POST /v1/apps/:app/restart-commit': 'deploy',
  'POST /v1/apps/:app/rollback': 'deploy',
  'POST /v1/apps/:app/stop': 'full',
  'POST /v1/apps/:app/run': 'full', // a command with every variable in reach
  'GET /v1/apps/:app/status': 'read',
  'GET /v1/apps/:app/logs': 'read',
  'GET /v1/apps/:app/accesslogs': 'read',
  'GET /v1/apps/:app/traffic': 'read',
  'GET /v1/apps/:app/cron': 'read',

  // Drains and notifications: their URLs are shown redacted below `full`
  'GET /v1/apps/:app/drains': 'read',
  'POST /v1/apps/:app/drains': 'full',
  'DELETE /v1/apps/:app/drains/:drain': 'full',
  'PUT /v1/apps/:app/drains/:drain/enabled': 'full',
  'DELETE /v1/apps/:app/drains/:drain/enabled': 'full',
  'GET /v1/apps/:app/webhooks': 'read',
  'POST /v1/apps/:app/webhooks': 'full',
  'DELETE /v1/apps/:app/webhooks/:name': 'full',
  'GET /v1/apps/:app/webhooks/:name/deliveries': 'read',
  'GET /v1/apps/:app/notify-emails': 'read',
  'POST /v1/apps/:app/notify-emails': 'full',
  'DELETE /v1/apps/:app/notify-emails/:ref': 'full',
  'GET /v1/apps/:app/notify-emails/:ref/deliveries': 'read',

  // Add-ons and their backups
  'GET /v1/addon-providers': 'read',
  'GET /v1/addons': 'read',
  'POST /v1/addons': 'full',
  'GET /v1/addons/:addon': 'read',
  'DELETE /v1/addons/:addon': 'full',
  'GET /v1/addons/:addon/env': 'full', // the add-on's credentials
  'GET /v1/addons/:addon/backups': 'read',
  'POST /v1/addons/:addon/backups': 'full',
  'POST /v1/addons/:addon/backups/:backup/verify': 'full',
  'GET /v1/addons/:addon/backups/:backup/dump': 'full', // the whole database
  'POST /v1/addons/:addon/restore': 'full',
  'POST /v1/addons/:addon/backup-schedule': 'full',
} as const satisfies Record<string, RouteAccess>;

export type RouteKey = keyof typeof ROUTE_SCOPES;

export function routeKey(method: string, pattern: string): string {
  return `${method} ${pattern}`;
}

/** The scope the table states for a route, or undefined when it states none (a defect). */
export function routeAccess(method: string, pattern: string): RouteAccess | undefined {
  return (ROUTE_SCOPES as Record<string, RouteAccess>)[routeKey(method, pattern)];
}
