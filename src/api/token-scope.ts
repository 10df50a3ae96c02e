import { ForbiddenError } from '../core/errors.js';
import { scopeCovers, type ApiToken, type TokenScope } from '../store/api-tokens.js';
import type { RouteSpec } from './route-spec.js';

/** The scope a route needs: its declaration's, else `read` for a GET and `full` for a change. */
export function requiredScope(spec: RouteSpec, method: string): TokenScope {
  return spec.scope ?? (method === 'GET' ? 'read' : 'full');
}

/** Refuses a request its token's scope does not cover, saying what would. */
export function requireScope(spec: RouteSpec, method: string, token: Pick<ApiToken, 'scope'>): void {
  const needed = requiredScope(spec, method);
  if (scopeCovers(token.scope, needed)) return;
  throw new ForbiddenError(
    `This API token has the scope "${token.scope}", which does not allow this (${spec.summary.replace(/\.$/, '')}): it needs "${needed}".`,
    `Use a token of scope ${needed} or more (slipway tokens create --scope ${needed}, made with such a token).`,
  );
}
