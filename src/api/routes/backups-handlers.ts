import type { HttpRouter } from '../http-router.js';
import type { ApiContext, ApiRequest } from '../context.js';
import { SlipwayError, ValidationError } from '../../core/errors.js';
import { checkDisplayName } from '../../core/names.js';
import type { AddonBackupView } from '../../shared/api-types.js';
import type { AddonBackupRow } from '../../store/addon-backups.js';
import type { AddonBackups, RestoreSource } from '../../backups/addon-backups.js';
import { addonForUser, addonView } from '../addon-access.js';
import { backupRoutes } from './backups-routes.js';
import { sendWithIdleTimeout } from '../send-stream.js';

function backups(ctx: ApiRequest): AddonBackups {
  if (!ctx.deps.backups) throw new SlipwayError(503, 'unavailable', 'Backups are not available on this daemon.');
  return ctx.deps.backups;
}

function backupView(row: AddonBackupRow): AddonBackupView {
  return {
    id: row.id,
    addon_id: row.addon_id,
    kind: row.kind,
    created_at: row.created_at,
    finished_at: row.finished_at,
    size_bytes: row.size_bytes,
    verification: row.verification,
    verification_detail: row.verification_detail,
    verified_at: row.verified_at,
    counts: JSON.parse(row.counts_json) as Record<string, number>,
  };
}

function restoreSource(input: { backup?: string; to?: string; as?: string }): RestoreSource {
  const { backup, to } = input;
  // Neither, with a new add-on's name: a fork of the add-on as it is now.
  if (backup === undefined && to === undefined && input.as !== undefined) return { now: true };
  if ((backup === undefined) === (to === undefined)) {
    throw new ValidationError(
      'Give either a backup (--backup <id>) or a time (--to <RFC 3339 time>) to restore to.',
      'Or give only --as <new-name> to fork the add-on as it is now.',
    );
  }
  if (backup !== undefined) {
    if (backup === '') throw new ValidationError('Field "backup" must be a backup id.');
    return { backupId: backup };
  }
  const time = to !== undefined && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(to) ? new Date(to) : undefined;
  if (!time || Number.isNaN(time.getTime())) {
    throw new ValidationError(
      `${JSON.stringify(to)} is not an RFC 3339 time.`,
      'For example 2026-11-25T14:32:10Z or 2026-11-25T15:32:10+01:00.',
    );
  }
  return { time };
}

export function backupHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(backupRoutes.list, (ctx) => {
    const addon = addonForUser(ctx.deps.store, ctx.user, ctx.params.addon, ctx.query.org);
    const service = backups(ctx);
    const list = service.list(addon);
    const window = service.window(addon);
    const schedule = service.schedules.of(addon.id);
    return {
      backups: list.map(backupView),
      window: window ? { from: window.from.toISOString(), to: window.to.toISOString() } : null,
      schedule: { at: schedule.at, keep_days: schedule.keep_days },
    };
  });

  router.handle(backupRoutes.create, async (ctx) => {
    const addon = addonForUser(ctx.deps.store, ctx.user, ctx.params.addon, ctx.query.org);
    return { backup: backupView(await backups(ctx).backupNow(addon)) };
  });

  router.handle(backupRoutes.verify, async (ctx) => {
    const addon = addonForUser(ctx.deps.store, ctx.user, ctx.params.addon, ctx.query.org);
    return { backup: backupView(await backups(ctx).verify(addon, ctx.params.backup)) };
  });

  router.handle(backupRoutes.download, async (ctx) => {
    const addon = addonForUser(ctx.deps.store, ctx.user, ctx.params.addon, ctx.query.org);
    let started = false;
    const service = backups(ctx);
    const fileName = service.dumpFileName(addon, ctx.params.backup);
    try {
      await service.download(addon, ctx.params.backup, async (dump) => {
        started = true;
        ctx.res.writeHead(200, {
          'content-type': 'application/octet-stream',
          'content-disposition': `attachment; filename="${fileName}"`,
        });
        // A client that stops reading is ended after the idle time: the job and its copy are freed.
        await sendWithIdleTimeout(ctx.res, dump, service.downloadIdleMs);
      });
    } catch (error) {
      // Once bytes went out the status cannot change: the cut connection tells the client.
      if (started) {
        ctx.res.destroy();
        return undefined;
      }
      throw error;
    }
    ctx.res.end();
    return undefined;
  });

  router.handle(backupRoutes.restore, async (ctx) => {
    const addon = addonForUser(ctx.deps.store, ctx.user, ctx.params.addon, ctx.query.org);
    const input = ctx.body;
    const source = restoreSource(input);
    const as = input.as === undefined ? undefined : checkDisplayName('add-on', input.as);
    const result = await backups(ctx).restore(addon, source, as);
    return { addon: addonView(ctx.deps.store, result.addon), safety_backup: result.safetyBackup ?? null };
  });

  router.handle(backupRoutes.schedule, (ctx) => {
    const addon = addonForUser(ctx.deps.store, ctx.user, ctx.params.addon, ctx.query.org);
    const input = ctx.body;
    const service = backups(ctx);
    const { at, keep_days: keepDays } = input;
    const schedule =
      at === undefined && keepDays === undefined ? service.schedules.of(addon.id) : service.schedules.set(addon.id, { at, keepDays });
    return { schedule: { at: schedule.at, keep_days: schedule.keep_days } };
  });
}
