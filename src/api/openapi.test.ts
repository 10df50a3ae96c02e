import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiRoutes, buildApiRouter } from './server.js';
import { buildOpenApi, errorStatuses } from './openapi.js';
import { HttpRouter } from './http-router.js';
import { checkBody, checkQuery } from './request-validation.js';
import { validate } from './schema.js';
import { deploymentRoutes } from './routes/deployments-routes.js';
import { instanceRoutes } from './routes/instances-routes.js';
import { appRoutes } from './routes/apps-routes.js';
import type { ValidationError } from '../core/errors.js';

const doc = buildOpenApi(apiRoutes());

test('every route of the router is in the document, with an operation id, a tag, parameters and its statuses', () => {
  const routes = apiRoutes();
  assert.ok(routes.length > 50);
  const ids = new Set<string>();
  for (const { method, pattern, spec } of routes) {
    const path = pattern.replace(/:([A-Za-z_]+)/g, '{$1}');
    const operation = (
      doc.paths[path] as Record<
        string,
        {
          operationId: string;
          tags: string[];
          summary: string;
          parameters?: Array<{ name: string; in: string }>;
          responses: Record<string, unknown>;
        }
      >
    )[method.toLowerCase()];
    assert.ok(operation, `${method} ${path} is missing`);
    assert.ok(!ids.has(operation.operationId), `operationId ${operation.operationId} is used twice`);
    ids.add(operation.operationId);
    assert.equal(operation.tags.length, 1);
    assert.ok(doc.tags.some((t) => t.name === operation.tags[0]));
    for (const name of [...pattern.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]))
      assert.ok(
        operation.parameters?.some((p) => p.in === 'path' && p.name === name),
        `${path}: ${name}`,
      );
    assert.ok(operation.responses[String(spec!.success.status)], `${path}: no success response`);
    for (const status of errorStatuses(pattern, spec!, method)) assert.ok(operation.responses[String(status)], `${path}: no ${status}`);
  }
  const documented = Object.values(doc.paths).reduce((n, methods) => n + Object.keys(methods).length, 0);
  assert.equal(documented, routes.length, 'the document has no operation without a route');
});

test('every reference of the document resolves, and POST routes answer 201 as the router sends it', () => {
  const text = JSON.stringify(doc);
  for (const [, name] of text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)) assert.ok(doc.components.schemas[name!], name);
  for (const { method, spec } of apiRoutes())
    if (method === 'POST' && spec!.success.status !== 101) assert.equal(spec!.success.status, 201, spec!.operationId);
});

test('an API router refuses a route without a declaration', () => {
  const router = new HttpRouter({ requireSpec: true });
  assert.throws(() => router.add('GET', '/v1/x', () => ({})), /GET \/v1\/x has no RouteSpec/);
  assert.ok(
    buildApiRouter()
      .list()
      .every((r) => r.spec),
  );
});

test('query parameters: unknown ones are refused with those that exist, wrong values with what is expected', () => {
  const logs = deploymentRoutes.appLogs;
  const check = (q: string) => checkQuery(logs, 'GET', '/v1/apps/:app/logs', new URLSearchParams(q));
  check('lines=100&since=2024-05-01T12:00:00Z&follow=1');
  assert.throws(
    () => check('lines=last'),
    (e: ValidationError) => e.message === 'lines must be a whole number of lines such as 100, not "last".',
  );
  assert.throws(() => check('lines=-3'), /lines must be a whole number of lines such as 100, not "-3"/);
  assert.throws(() => check('since=soon'), /since must be a time such as 2024-05-01T12:00:00Z, not "soon"/);
  assert.throws(() => check('follow=yes'), /follow must be one of 0, 1, not "yes"/);
  assert.throws(
    () => check('tail=5'),
    (e: ValidationError) => e.message === 'Unknown query parameter "tail".' && /takes lines, since, follow/.test(e.hint!),
  );
  assert.throws(() => check('lines=1&lines=2'), /given 2 times/);
});

test('bodies: unknown, missing and mistyped fields are refused saying which', () => {
  const scale = instanceRoutes.setScale;
  checkBody(scale, 'PUT', '/v1/apps/:app/scale', { flavor: 'XS', instances: '3' });
  checkBody(scale, 'PUT', '/v1/apps/:app/scale', { instances: 2 });
  assert.throws(
    () => checkBody(scale, 'PUT', '/v1/apps/:app/scale', { flavour: 'S' }),
    (e: ValidationError) => e.message === 'Unknown field "flavour" in the request body.' && /flavor, buildFlavor, instances/.test(e.hint!),
  );
  assert.throws(
    () => checkBody(scale, 'PUT', '/v1/apps/:app/scale', { instances: true }),
    /Field "instances" must be a whole number or a string/,
  );
  const create = appRoutes.create;
  assert.throws(
    () => checkBody(create, 'POST', '/v1/apps', { type: 'node', org: 'x' }),
    (e: ValidationError) => e.message === 'Missing field "name".' && e.hint === 'Unique in its organisation',
  );
  assert.throws(() => checkBody(deploymentRoutes.restart, 'POST', '/v1/apps/:app/restart', { mode: 'x' }), /takes no request body/);
});

test('a schema validates nested arrays, nullable values and references of the served document', () => {
  const env = { type: 'array', items: { $ref: '#/components/schemas/EnvVar' } } as const;
  assert.deepEqual(validate(env, [{ name: 'A', value: 'b' }], 'env', doc), []);
  assert.deepEqual(
    validate(env, [{ name: 'A', value: 1 }], 'env', doc).map((p) => `${p.at} ${p.message}`),
    ['env[0].value must be a string'],
  );
  const app = doc.components.schemas.App!;
  const problems = validate(app, { id: 'x' }, 'app', doc);
  assert.ok(problems.some((p) => p.at === 'app.name' && p.kind === 'missing'));
});
