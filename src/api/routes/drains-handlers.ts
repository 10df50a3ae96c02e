import type { HttpRouter } from '../http-router.js';
import type { ApiContext, ApiRequest } from '../context.js';
import type { AppRow } from '../../store/apps.js';
import type { DrainRow } from '../../store/drains.js';
import { appForUser } from '../access.js';
import { orgOfApp, quotasOf } from '../quotas.js';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import { checkDrainUrl, parseDrainType } from '../../drains/drain-target.js';
import { drainRoutes } from './drains-routes.js';
import { receiverUrlFor, receiverUserFor } from '../receiver-urls.js';

function drainView(ctx: ApiRequest, row: DrainRow) {
  const status = ctx.deps.drains?.service.status(row.id);
  return {
    id: row.id,
    type: row.type,
    url: receiverUrlFor(ctx.token.scope, row.url),
    username: receiverUserFor(ctx.token.scope, row.username),
    with_access_logs: row.with_access_logs === 1,
    enabled: row.enabled === 1,
    created_at: row.created_at,
    state: status?.state ?? ('unknown' as const),
    waiting: status?.waiting ?? 0,
    lag_seconds: Math.round((status?.lag_seconds ?? 0) * 10) / 10,
    dropped: status?.dropped ?? 0,
    delivered: status?.delivered ?? 0,
    last_error: status?.last_error ?? null,
    last_delivery_at: status?.last_delivery_at ?? null,
  };
}

function ownDrain(ctx: ApiRequest, app: AppRow, id: string): DrainRow {
  const row = ctx.deps.store.drains.byId(id);
  if (!row || row.app_id !== app.id) throw new NotFoundError(`${app.name} has no drain ${id}.`, 'List its drains with `slipway drain`.');
  return row;
}

function optionalText(value: string | undefined, name: string): string | null {
  if (value === undefined || value === '') return null;
  if (value.length > 1024) throw new ValidationError(`--${name} must be text of at most 1024 characters.`);
  return value;
}

/** Log drains of an application (`slipway drain`). */
export function drainHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(drainRoutes.list, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    return { drains: ctx.deps.store.drains.ofApp(app.id).map((row) => drainView(ctx, row)) };
  });

  router.handle(drainRoutes.create, async (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    quotasOf(ctx.deps).checkNewDrain(orgOfApp(ctx.deps, app));
    const body = ctx.body;
    const type = parseDrainType(body.type);
    const egress = ctx.deps.drains?.forbidden;
    if (!egress) throw new ValidationError('Drains are not available on this server.');
    const url = await checkDrainUrl(type, body.url, egress);
    const username = optionalText(body.username, 'username');
    const password = optionalText(body.password, 'password');
    if (password !== null && username === null) throw new ValidationError('--password needs --username.');
    if (username !== null && (type === 'TCPSyslog' || type === 'UDPSyslog'))
      throw new ValidationError('Syslog drains take no --username or --password.', 'Credentials are for HTTP and ElasticSearch drains.');
    const row = ctx.deps.store.drains.add({
      app_id: app.id,
      type,
      url: url.href,
      username,
      password,
      with_access_logs: body.with_access_logs ? 1 : 0,
    });
    return { drain: drainView(ctx, row) };
  });

  router.handle(drainRoutes.remove, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const row = ownDrain(ctx, app, ctx.params.drain);
    const view = drainView(ctx, row);
    ctx.deps.store.drains.remove(row.id);
    return { drain: view };
  });

  // PUT turns a drain on, DELETE off: both may be repeated with the same outcome.
  for (const [verb, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    router.handle(drainRoutes[verb], (ctx) => {
      const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
      const row = ownDrain(ctx, app, ctx.params.drain);
      ctx.deps.store.drains.setEnabled(row.id, enabled);
      return { drain: drainView(ctx, ctx.deps.store.drains.byId(row.id)!) };
    });
  }
}
