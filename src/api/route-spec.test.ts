import { test } from 'node:test';
import assert from 'node:assert/strict';
import { route, type PathParams, type RouteBody, type RouteOutput } from './route-spec.js';
import { arr, int, nullable, obj, oneOf, str, type Infer } from './schema.js';

const setVariable = route({
  route: 'PUT /v1/apps/:app/env/:name',
  operationId: 'example',
  tag: 'Environment',
  summary: 'An example',
  params: { app: 'Application id', name: 'Variable name' },
  body: obj({ value: str(), note: nullable(str()), tries: int() }, ['note', 'tries']),
  success: { status: 200, response: { description: 'The variables', schema: obj({ env: arr(obj({ name: str(), value: str() })) }) } },
  errors: [404],
});

test('a declaration gives its method, path and the scope the table states', () => {
  assert.equal(setVariable.method, 'PUT');
  assert.equal(setVariable.path, '/v1/apps/:app/env/:name');
  assert.equal(setVariable.scope, 'full');
});

// The lines marked @ts-expect-error fail the build (npx tsc) once they compile: the types would have drifted.
test('a handler is typed from the declaration: path parameters, body and answer', () => {
  const params: PathParams<typeof setVariable.path> = { app: 'app_1', name: 'PORT' };
  // @ts-expect-error a parameter the path does not have
  assert.equal(params.other, undefined);
  const body: RouteBody<typeof setVariable> = { value: 'x' };
  // @ts-expect-error a field of the wrong type
  const wrong: RouteBody<typeof setVariable> = { value: 1 };
  const answer: RouteOutput<typeof setVariable> = { env: [{ name: 'A', value: 'b' }] };
  const states = oneOf(['WIP', 'OK']);
  const state: Infer<typeof states> = 'OK';
  // @ts-expect-error a value outside the enum
  const outside: Infer<typeof states> = 'FAIL';
  assert.deepEqual([params.name, body.value, answer?.env[0]?.name, state], ['PORT', 'x', 'A', 'OK']);
  assert.deepEqual([wrong.value, outside], [1, 'FAIL']);
});

test('a declaration must name a route of ROUTE_SCOPES and describe each path parameter', () => {
  const answer = { status: 200, response: { description: 'x', schema: str() } } as const;
  const base = { operationId: 'x', tag: 'Apps', summary: 'x', errors: [], success: answer };
  // @ts-expect-error a route without a decided scope (the router refuses it at start too: route-scopes.test.ts)
  assert.equal(route({ ...base, route: 'GET /v1/unscoped' }).scope, undefined);
  // @ts-expect-error the :app parameter is not described
  assert.equal(route({ ...base, route: 'GET /v1/apps/:app' }).scope, 'read');
});
