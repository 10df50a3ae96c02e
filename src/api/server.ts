import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { HttpRouter, readJsonBody, sendError, sendJson, type Handler } from './http-router.js';
import type { ApiContext } from './context.js';
import type { ApiDependencies } from './platform.js';
import { authenticate } from './authenticate.js';
import { buildOpenApi } from './openapi.js';
import { serverRoutes } from './server-routes.js';
import { checkBody, checkQuery } from './request-validation.js';
import { handleRunUpgrade } from './run-upgrade.js';
import { sendMetrics } from './metrics.js';
import { orgHandlers } from './routes/orgs-handlers.js';
import { userHandlers } from './routes/users-handlers.js';
import { appHandlers } from './routes/apps-handlers.js';
import { envHandlers } from './routes/env-handlers.js';
import { sshKeyHandlers } from './routes/ssh-keys-handlers.js';
import { deploymentHandlers } from './routes/deployments-handlers.js';
import { rollbackHandlers } from './routes/rollback-handlers.js';
import { appConfigHandlers } from './routes/app-config-handlers.js';
import { instanceHandlers } from './routes/instances-handlers.js';
import { addonHandlers } from './routes/addons-handlers.js';
import { backupHandlers } from './routes/backups-handlers.js';
import { serviceHandlers } from './routes/services-handlers.js';
import { publishedConfigHandlers } from './routes/published-config-handlers.js';
import { runtimeHandlers } from './routes/runtimes-handlers.js';
import { tokenHandlers } from './routes/tokens-handlers.js';
import { domainHandlers } from './routes/domains-handlers.js';
import { trafficHandlers } from './routes/traffic-handlers.js';
import { planHandlers } from './routes/plan-handlers.js';
import { systemHandlers } from './routes/system-handlers.js';
import { requireScope, requiredAccess } from './token-scope.js';
import { endWhenAccessEnds } from './access-watch.js';
import { cronHandlers } from './routes/cron-handlers.js';
import { drainHandlers } from './routes/drains-handlers.js';
import { notificationHandlers } from './routes/notifications-handlers.js';

/** Extra rooms (deployments, add-ons, console) plug their routes in here. */
export type RouteModule = (router: HttpRouter<ApiContext>) => void;

/** Requests not under /v1/ go here (the console's static files). */
export type FallbackHandler = (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;

export function buildApiRouter(extraModules: RouteModule[] = []): HttpRouter<ApiContext> {
  const router = new HttpRouter<ApiContext>({
    requireSpec: true,
    // A request that does not fit the route's declaration is refused before its handler runs.
    async check(spec, ctx, { method, pattern }) {
      requireScope({ method, pattern, spec }, ctx.token);
      checkQuery(spec, method, pattern, ctx.query);
      if (method !== 'GET') checkBody(spec, method, pattern, await ctx.body());
    },
  });
  for (const module of [
    userHandlers,
    orgHandlers,
    appHandlers,
    envHandlers,
    sshKeyHandlers,
    deploymentHandlers,
    rollbackHandlers,
    appConfigHandlers,
    instanceHandlers,
    addonHandlers,
    backupHandlers,
    serviceHandlers,
    publishedConfigHandlers,
    runtimeHandlers,
    tokenHandlers,
    domainHandlers,
    trafficHandlers,
    planHandlers,
    systemHandlers,
    cronHandlers,
    drainHandlers,
    notificationHandlers,
    ...extraModules,
  ])
    module(router);
  // A route whose scope was never decided is not served at all (route-scopes.ts).
  for (const { method, pattern } of router.list()) requiredAccess(method, pattern);
  return router;
}

/** Every route of the API with its declaration, those the server answers itself included. */
export function apiRoutes(router: HttpRouter<ApiContext> = buildApiRouter()) {
  return [...Object.values(serverRoutes).map((spec) => ({ method: spec.method, pattern: spec.path, spec })), ...router.list()];
}

export function createApiServer(deps: ApiDependencies, options: { modules?: RouteModule[]; fallback?: FallbackHandler } = {}): Server {
  const router = buildApiRouter(options.modules);
  const openapi = buildOpenApi(apiRoutes(router));

  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://api.invalid');
      const path = url.pathname;
      if (req.method === 'GET' && path === '/v1/health') return sendJson(res, 200, { ok: true });
      if (req.method === 'GET' && path === '/v1/openapi.json') return sendJson(res, 200, openapi);
      if (req.method === 'GET' && path === '/metrics') return await sendMetrics(deps, req, res);
      if (!path.startsWith('/v1/')) {
        if (options.fallback && (await options.fallback(req, res))) return;
        return sendJson(res, 404, { error: { code: 'not_found', message: `Nothing at ${path}.`, hint: 'The API lives under /v1/.' } });
      }
      const { user, token } = authenticate(deps.store, req);
      // A request that stays open (a followed log) ends within a second of its access ending.
      const appRef = /^\/v1\/apps\/([^/]+)/.exec(path)?.[1];
      const stopWatching = endWhenAccessEnds(
        deps.store,
        { tokenId: token.id, userId: user.id, appId: appRef === undefined ? undefined : decodedOrUndefined(appRef) },
        () => res.destroy(),
      );
      res.once('close', stopWatching);
      let bodyPromise: Promise<Record<string, unknown>> | undefined;
      await router.dispatch(
        { req, res, query: url.searchParams, user, token, deps, body: () => (bodyPromise ??= readJsonBody(req)) },
        req.method ?? 'GET',
        path,
      );
    } catch (error) {
      sendError(res, error);
    }
  });
  // `slipway run` streams both ways over an upgraded connection.
  server.on('upgrade', (req: IncomingMessage, socket, head: Buffer) => void handleRunUpgrade(deps, req, socket, head));
  return server;
}

export type { Handler };

/** A path segment decoded, or undefined when it is not valid percent-encoding (the route refuses it). */
function decodedOrUndefined(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
