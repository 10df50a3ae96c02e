import type { RouteSpec } from './route-spec.js';
import { nameOf, type Schema } from './schema.js';
import { ErrorBody } from './schemas.js';
import { routeAccess } from './route-scopes.js';

/** What each error status means, for every route that may answer it. */
const ERROR_MEANINGS: Record<number, string> = {
  400: 'Invalid request: a path segment, query parameter or body field that does not fit',
  401: 'Missing, unknown, expired or revoked API token',
  403: 'Not allowed for this user, or to a token of lower scope than its x-slipway-scope',
  404: 'Not found among what the user can reach',
  409: 'Conflicts with the current state',
  502: 'A service the daemon relies on failed',
  503: 'Not available on this daemon',
};

const ORDER = [
  'Daemon',
  'Users',
  'Tokens',
  'Organisations',
  'Applications',
  'Environment',
  'Deployments',
  'Scaling',
  'Domains',
  'Add-ons',
  'Services',
  'SSH keys',
  'Runtimes',
];

export interface DocumentedRoute {
  method: string;
  pattern: string;
  spec?: RouteSpec;
}

/**
 * Replaces each named schema (src/api/schemas.ts) by a reference to its component, adding the
 * component the first time; the rest is copied as is.
 */
function toDocument(schema: Schema, components: Record<string, Schema>): Schema {
  const name = nameOf(schema);
  if (name && !components[name]) {
    components[name] = {}; // reserved first, so a schema that refers to itself terminates
    components[name] = convert(schema, components);
  }
  return name ? { $ref: `#/components/schemas/${name}` } : convert(schema, components);
}

function convert(schema: Schema, components: Record<string, Schema>): Schema {
  const out: Schema = { ...schema };
  if (schema.items) out.items = toDocument(schema.items, components);
  if (schema.properties)
    out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, toDocument(v, components)]));
  if (typeof schema.additionalProperties === 'object') out.additionalProperties = toDocument(schema.additionalProperties, components);
  if (schema.anyOf) out.anyOf = schema.anyOf.map((s) => toDocument(s, components));
  return out;
}

/** The statuses a route may answer besides its success, as the document lists them. */
export function errorStatuses(pattern: string, spec: RouteSpec, method: string): number[] {
  const statuses = new Set(spec.errors);
  // A token of too low a scope is refused (route-scopes.ts).
  if (!['public', 'read'].includes(routeAccess(method, pattern) ?? 'read')) statuses.add(403);
  // Path segments, query parameters and bodies are all checked by the router.
  if (pattern.includes(':') || spec.query || spec.body) statuses.add(400);
  if (routeAccess(method, pattern) !== 'public') statuses.add(401);
  return [...statuses].sort((a, b) => a - b);
}

/**
 * The OpenAPI 3.1 document of the API, built from the routes' declarations: the same objects
 * the router validates requests with, so the two cannot disagree.
 */
export function buildOpenApi(routes: DocumentedRoute[]) {
  const components: Record<string, Schema> = {};
  const errorRef = toDocument(ErrorBody, components);
  const paths: Record<string, Record<string, unknown>> = {};
  const operationIds = new Set<string>();
  for (const { method, pattern, spec } of routes) {
    if (!spec) throw new Error(`${method} ${pattern} has no RouteSpec, so it cannot be documented.`);
    if (operationIds.has(spec.operationId)) throw new Error(`Two routes share the operationId ${spec.operationId}.`);
    operationIds.add(spec.operationId);
    const path = pattern.replace(/:([A-Za-z_]+)/g, '{$1}');
    const pathParams = [...pattern.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
    for (const name of pathParams) {
      if (!spec.params?.[name]) throw new Error(`${method} ${pattern}: the path parameter ${name} is not described in its RouteSpec.`);
    }
    const parameters = [
      ...pathParams.map((name) => ({ name, in: 'path', required: true, description: spec.params![name], schema: { type: 'string' } })),
      ...Object.entries(spec.query ?? {}).map(([name, q]) => ({
        name,
        in: 'query',
        required: false,
        description: q.description,
        schema: toDocument(q.schema, components),
      })),
    ];
    const { status, response } = spec.success;
    const responses: Record<string, unknown> = {
      [String(status)]: {
        description: response.description,
        ...(status === 101
          ? {}
          : {
              content: {
                [response.text ?? (response.stream ? 'application/x-ndjson' : 'application/json')]: {
                  schema: toDocument(response.schema, components),
                },
              },
            }),
      },
    };
    for (const error of errorStatuses(pattern, spec, method)) {
      responses[String(error)] = { description: ERROR_MEANINGS[error] ?? 'Error', content: { 'application/json': { schema: errorRef } } };
    }
    responses.default = { description: 'Unexpected error in the daemon', content: { 'application/json': { schema: errorRef } } };
    paths[path] ??= {};
    paths[path]![method.toLowerCase()] = {
      operationId: spec.operationId,
      tags: [spec.tag],
      summary: spec.summary,
      ...(spec.description ? { description: spec.description } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(spec.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: toDocument(spec.body, components) } } } }
        : {}),
      ...(routeAccess(method, pattern) === 'public' ? { security: [] } : { 'x-slipway-scope': routeAccess(method, pattern) }),
      responses,
    };
  }
  const tags = [...new Set(routes.map((r) => r.spec!.tag))].sort((a, b) => (ORDER.indexOf(a) + 1 || 99) - (ORDER.indexOf(b) + 1 || 99));
  return {
    openapi: '3.1.0',
    info: {
      title: 'slipway API',
      version: '1',
      description:
        'Every request but /v1/health and /v1/openapi.json needs `Authorization: Bearer <token>`, of at least the scope its operation states in x-slipway-scope (read, deploy or full). Errors answer {"error": {"code", "message", "hint"}}.',
    },
    security: [{ bearer: [] }],
    tags: tags.map((name) => ({ name })),
    paths,
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } }, schemas: components },
  };
}

export type OpenApiDocument = ReturnType<typeof buildOpenApi>;
