import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiRoutes, buildApiRouter } from './server.js';
import { ROUTE_SCOPES, routeAccess, routeKey } from './route-scopes.js';
import { requireScope } from './token-scope.js';
import { ForbiddenError } from '../core/errors.js';
import { scopeCovers, TOKEN_SCOPES } from '../store/api-tokens.js';
import type { RouteSpec } from './route-spec.js';

const routes = apiRoutes().map((r) => ({ ...r, spec: r.spec as RouteSpec }));

test('every route of the API has a scope in the table, and the table names no route that is gone', () => {
  assert.ok(routes.length > 50);
  const missing = routes.filter((r) => routeAccess(r.method, r.pattern) === undefined).map((r) => routeKey(r.method, r.pattern));
  assert.deepEqual(missing, [], 'add these to ROUTE_SCOPES in src/api/route-scopes.ts');
  const served = new Set(routes.map((r) => routeKey(r.method, r.pattern)));
  assert.deepEqual(
    Object.keys(ROUTE_SCOPES).filter((key) => !served.has(key)),
    [],
    'these entries of ROUTE_SCOPES name no route',
  );
});

test('a route added without a scope stops the API router from being built, naming it', () => {
  const spec = routes[0]!.spec;
  assert.throws(
    () => buildApiRouter([(router) => router.add('GET', '/v1/unscoped', { ...spec, operationId: 'unscoped' }, () => ({}))]),
    /GET \/v1\/unscoped has no scope: add it to ROUTE_SCOPES in src\/api\/route-scopes.ts/,
  );
});

test('only the liveness check and the document are public; read never changes state', () => {
  const open = routes.filter((r) => routeAccess(r.method, r.pattern) === 'public').map((r) => routeKey(r.method, r.pattern));
  assert.deepEqual(open.sort(), ['GET /v1/health', 'GET /v1/openapi.json']);
  for (const { method, pattern } of routes) {
    if (routeAccess(method, pattern) === 'read') assert.equal(method, 'GET', `${method} ${pattern} changes state: it cannot be read`);
  }
});

test('what shows a secret or runs code needs a full token', () => {
  for (const key of [
    'GET /v1/apps/:app/env',
    'GET /v1/addons/:addon/env',
    'GET /v1/addons/:addon/backups/:backup/dump',
    'GET /v1/apps/:app/published-config',
    'POST /v1/apps/:app/run',
    'POST /v1/system/backup',
  ] as const) {
    assert.equal(ROUTE_SCOPES[key], 'full', key);
  }
  assert.notEqual(ROUTE_SCOPES['POST /v1/tokens'], 'read', 'a read token mints no other token');
});

test('each scope is refused exactly where the table asks for more, saying what is needed and how to get it', () => {
  for (const route of routes) {
    const access = routeAccess(route.method, route.pattern)!;
    for (const scope of TOKEN_SCOPES) {
      const allowed = access === 'public' || scopeCovers(scope, access);
      const what = `${scope} on ${route.method} ${route.pattern}`;
      if (allowed) {
        assert.doesNotThrow(() => requireScope(route, { scope }), what);
        continue;
      }
      assert.throws(
        () => requireScope(route, { scope }),
        (error: unknown) =>
          error instanceof ForbiddenError &&
          error.status === 403 &&
          error.message.includes(`has the scope "${scope}"`) &&
          error.message.includes(`it needs "${access}"`) &&
          (error.hint ?? '').includes(`slipway tokens create --scope ${access}`),
        what,
      );
    }
  }
});
