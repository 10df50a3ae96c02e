import { FLAVORS } from '../core/flavors.js';

/** The OpenAPI document is built from the routes themselves, so it cannot drift from them. */
const summaries: Record<string, string> = {
  'GET /v1/health': 'Liveness of the daemon (no token needed)',
  'GET /v1/openapi.json': 'This document (no token needed)',
  'GET /v1/me': 'The authenticated user and their organisations',
  'POST /v1/users': 'Create a user and their first API token (administrators)',
  'GET /v1/orgs': 'Organisations the user belongs to',
  'POST /v1/orgs': 'Create an organisation; the creator becomes its owner',
  'GET /v1/orgs/{org}': 'One organisation (id or name) with its members',
  'POST /v1/orgs/{org}/members': 'Add a user to an organisation',
  'GET /v1/apps': 'Applications of the user (optionally of one organisation: ?org=)',
  'POST /v1/apps': 'Create an application: type, name, region (par|mtl), org',
  'GET /v1/apps/{app}': 'One application with its git URL and domain',
  'DELETE /v1/apps/{app}': 'Delete an application, its instances and its repository',
  'GET /v1/apps/{app}/env': "The application's own variables; ?all=1 adds sections: its own, each linked add-on's, each linked application's exposed configuration",
  'PUT /v1/apps/{app}/env': 'Replace every variable at once: {"env":[{"name","value"}]}',
  'PUT /v1/apps/{app}/env/{name}': 'Set one variable: {"value"}',
  'DELETE /v1/apps/{app}/env/{name}': 'Remove one variable',
  'GET /v1/apps/{app}/deployments': 'Deployments of the application, newest first (?limit=)',
  'POST /v1/apps/{app}/deployments': 'Deploy again: {"mode":"rebuild","commit"?} builds a pushed commit, {"mode":"restart"} restarts the current release',
  'GET /v1/apps/{app}/deployments/{deployment}': 'One deployment: state WIP, OK, FAIL or CANCELLED, phase, message',
  'GET /v1/apps/{app}/deployments/{deployment}/logs': 'Deployment log as NDJSON; ?lines=<n> and ?since=<time> keep its end; ?follow=1 streams it live until the deployment ends',
  'POST /v1/apps/{app}/restart': 'Start the current release again with the current variables, health-checked, without a rebuild',
  'POST /v1/apps/{app}/stop': 'Stop the application (the router answers 503 until the next deployment or restart)',
  'GET /v1/apps/{app}/scale': 'Instance count and flavours of the instances and builds, with their memory',
  'PUT /v1/apps/{app}/scale': `Change the scaling: {"flavor"?, "buildFlavor"?, "instances"?}; flavours (${FLAVORS.map((f) => f.name).join(', ')}; any case) apply at the next deployment or restart, the instance count at once`,
  'GET /v1/apps/{app}/status': 'Running or stopped, the serving instance and release, deployments in progress',
  'GET /v1/apps/{app}/logs': "The application's output as NDJSON; ?lines=<n> and ?since=<time> keep its end; ?follow=1 streams it live",
  'GET /v1/addon-providers': 'Add-on providers this daemon offers: {"providers":[{"name","description"}]}',
  'GET /v1/addons': 'Add-ons of the user (optionally of one organisation: ?org=), with the ids of the apps linked to each',
  'POST /v1/addons': 'Create (provision) an add-on: {"provider", "name", "org", "link"?: [app ids of that organisation]}',
  'GET /v1/addons/{addon}': 'One add-on (id, or name with ?org= when several organisations use it)',
  'GET /v1/addons/{addon}/env': 'The variables a linked application receives from the add-on (credentials included)',
  'DELETE /v1/addons/{addon}': 'Delete an add-on and its data; refused (409) while linked unless ?unlink=1',
  'GET /v1/apps/{app}/services': 'Service dependencies: linked add-ons and linked applications',
  'POST /v1/apps/{app}/services/addons': 'Link an add-on of the same organisation: {"addon": id or name}',
  'DELETE /v1/apps/{app}/services/addons/{addon}': 'Unlink an add-on (id or name)',
  'POST /v1/apps/{app}/services/apps': "Link another application: {\"app\": id}; this one receives its exposed configuration",
  'DELETE /v1/apps/{app}/services/apps/{target}': 'Unlink an application',
  'GET /v1/apps/{app}/published-config': 'Configuration the application exposes to the applications linked to it',
  'PUT /v1/apps/{app}/published-config/{name}': 'Expose a variable: {"value"}; restarts the linked applications that run',
  'DELETE /v1/apps/{app}/published-config/{name}': 'Stop exposing a variable; restarts the linked applications that run',
  'GET /v1/ssh-keys': "The user's SSH public keys",
  'POST /v1/ssh-keys': 'Register an SSH public key: {"public_key", "label"?}',
  'DELETE /v1/ssh-keys/{key}': 'Remove an SSH key (id, label or fingerprint)',
};

export function summaryFor(method: string, openApiPath: string): string | undefined {
  return summaries[`${method} ${openApiPath}`];
}

export function buildOpenApi(routes: Array<{ method: string; pattern: string }>, extraSummaries: Record<string, string> = {}) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { method, pattern } of routes) {
    const path = pattern.replace(/:([A-Za-z_]+)/g, '{$1}');
    const parameters = [...pattern.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    const key = `${method} ${path}`;
    const isPublic = path === '/v1/health' || path === '/v1/openapi.json';
    paths[path] ??= {};
    paths[path]![method.toLowerCase()] = {
      summary: summaries[key] ?? extraSummaries[key] ?? key,
      parameters,
      ...(isPublic ? { security: [] } : {}),
      responses: {
        '200': { description: 'Success (JSON)' },
        default: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    };
  }
  return {
    openapi: '3.0.3',
    info: { title: 'slipway API', version: '1' },
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        Error: {
          type: 'object',
          properties: {
            error: {
              type: 'object',
              properties: { code: { type: 'string' }, message: { type: 'string' }, hint: { type: 'string', nullable: true } },
            },
          },
        },
      },
    },
    paths,
  };
}
