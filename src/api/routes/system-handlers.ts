import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { SlipwayError, ValidationError } from '../../core/errors.js';
import { requireAdmin } from '../access.js';
import { systemRoutes } from './system-routes.js';
import { appDiskUse } from '../disk-use.js';

/**
 * `slipway system stop`: the one way to stop the data plane. The daemon drains and stops it,
 * answers with what it stopped, then exits.
 */
export function systemHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(systemRoutes.status, async ({ user, deps }) => {
    requireAdmin(user);
    const reserve = deps.reserve;
    const disks = reserve ? (await reserve.free()).map((d) => ({ label: d.label, path: d.path, free_bytes: d.free })) : [];
    return { apps: await appDiskUse(deps), min_free_bytes: reserve?.minFree ?? null, disks };
  });

  router.handle(systemRoutes.stop, async ({ user, deps }) => {
    requireAdmin(user);
    const stop = deps.services?.stopSystem;
    if (!stop) throw new SlipwayError(503, 'unavailable', 'This daemon runs no data plane to stop.');
    return await stop();
  });

  // One transaction re-seals every value; the key file is replaced only once it committed.
  router.handle(systemRoutes.rotateSecretsKey, async ({ user, deps }) => {
    requireAdmin(user);
    const rotate = deps.services?.rotateSecretsKey;
    if (!rotate) throw new SlipwayError(503, 'unavailable', 'This daemon keeps no secrets key to rotate.');
    const done = await rotate();
    return { key_file: done.keyFile, old_key_id: done.oldKeyId, new_key_id: done.newKeyId, resealed: done.resealed };
  });

  router.handle(systemRoutes.backup, async (ctx) => {
    const { user, deps } = ctx;
    requireAdmin(user);
    const backup = deps.services?.backupPlatform;
    if (!backup) throw new SlipwayError(503, 'unavailable', 'This daemon cannot write a platform backup.');
    const { to } = ctx.body;
    if (to !== undefined && !to.startsWith('/')) {
      throw new ValidationError(
        `The backup folder must be an absolute path on the daemon's machine, not ${JSON.stringify(to)}.`,
        'Give an absolute folder, e.g. --to /mnt/backups/slipway.',
      );
    }
    const report = await backup(to);
    const m = report.manifest;
    return {
      path: report.path,
      name: report.name,
      place: report.place,
      created_at: m.created_at,
      slipway_version: m.slipway_version,
      repositories: m.repositories.length,
      addons: m.addons.map((a) => ({ name: a.name, provider: a.provider, backup_id: a.backup_id })),
      files: m.files.length,
      size_bytes: m.files.reduce((sum, f) => sum + f.size_bytes, 0),
      releases: (m.releases ?? []).length,
      releases_bytes: (m.releases ?? []).reduce((sum, r) => sum + r.size_bytes, 0),
      shared_releases: report.sharedReleases,
      encrypted: Boolean(m.encrypted),
      warning: report.warning ?? null,
    };
  });
}
