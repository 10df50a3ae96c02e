import { ForbiddenError } from '../core/errors.js';
import { scopeCovers, type ApiToken } from '../store/api-tokens.js';
import type { RouteSpec } from './route-spec.js';
import { routeAccess, type RouteAccess } from './route-scopes.js';

/** A route as the router and the server know it. */
export interface ScopedRoute {
  method: string;
  pattern: string;
  spec: RouteSpec;
}

/** What the table of route-scopes.ts states for a route; a route missing from it is a defect, said at once. */
export function requiredAccess(method: string, pattern: string): RouteAccess {
  const access = routeAccess(method, pattern);
  if (access === undefined) {
    throw new Error(`The API route ${method} ${pattern} has no scope: add it to ROUTE_SCOPES in src/api/route-scopes.ts.`);
  }
  return access;
}

/** Refuses a request its token's scope does not cover, saying which scope would and how to get one. */
export function requireScope(route: ScopedRoute, token: Pick<ApiToken, 'scope'>): void {
  const needed = requiredAccess(route.method, route.pattern);
  if (needed === 'public' || scopeCovers(token.scope, needed)) return;
  throw new ForbiddenError(
    `This API token has the scope "${token.scope}", which does not allow this (${route.spec.summary.replace(/\.$/, '')}): it needs "${needed}".`,
    `Use a token of scope ${needed}${needed === 'full' ? '' : ' or full'}: \`slipway tokens create --scope ${needed}\`, run with such a token ` +
      '(or ask an administrator for one), then `slipway login --token <token>` or SLIPWAY_TOKEN=<token>.',
  );
}
