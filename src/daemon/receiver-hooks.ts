import type { Store } from '../store/store.js';
import type { ReceiverHooks } from '../receiver/ssh-git-server.js';
import type { Deployer } from '../pipeline/deployer.js';
import type { PublicEndpoints } from '../api/platform.js';
import { appUrl } from '../api/platform.js';
import { isAppId } from '../core/names.js';
import { settingsFrom } from '../core/app-settings.js';
import { pushAllowance, pushTooLargeMessage } from '../core/disk-size.js';
import type { AppDisks } from '../storage/app-disks.js';
import type { DiskReserve } from '../storage/disk-reserve.js';

/** Connects the git receiver to the store (who may push) and the deployer (what a push starts). */
export function makeReceiverHooks(
  store: Store,
  deployer: Deployer,
  endpoints: PublicEndpoints,
  disks?: AppDisks,
  reserve?: DiskReserve,
): ReceiverHooks {
  return {
    // The repository lives in the app's filesystem: mounted before git writes, the push bounded by
    // what is left of its budget, and by what the data folder's disk has above the reserve (the
    // app's filesystem is a file there that grows as the pack is written).
    async pushLimit(appId) {
      let limit: { maxBytes: number; refusal: string[] } | null = null;
      if (disks) {
        await disks.ensure(appId);
        const use = await disks.use(appId);
        if (use) {
          const maxBytes = pushAllowance(use);
          limit = { maxBytes, refusal: pushTooLargeMessage(use, maxBytes) };
        }
      }
      const host = await reserve?.room();
      if (host && (!limit || host.room < limit.maxBytes)) {
        limit = { maxBytes: Math.max(0, host.room), refusal: reserve!.pushRefusal(host) };
      }
      return limit;
    },
    async authenticate(key) {
      return store.sshKeys.byFingerprint(key.fingerprint)?.user_id ?? null;
    },
    async authorize(userId, appId) {
      if (!isAppId(appId)) return false;
      const app = store.apps.byId(appId);
      return app !== undefined && store.orgs.isMember(app.org_id, userId);
    },
    async onPush(push, say) {
      const app = store.apps.byId(push.appId);
      if (!app) return;
      if (settingsFrom(store.appConfig.all(app.id))['cancel-on-push']) {
        const cancelled = deployer.cancel(app.id, `cancelled by a newer push (commit ${push.after.slice(0, 12)})`, true);
        if (cancelled.length) say(`slipway: cancel-on-push: cancelled ${cancelled.join(', ')}.`);
      }
      const deployment = deployer.enqueue(app, { commit: push.after, cause: 'git push', userId: push.userId, mode: 'build' });
      say(`slipway: deployment ${deployment.id} queued for ${app.name} (commit ${push.after.slice(0, 12)}).`);
      say(`slipway: follow it with: slipway logs --app ${app.id} --deployment-id ${deployment.id} --follow`);
      say(`slipway: the application will answer at ${appUrl(endpoints, app.id)}`);
    },
  };
}
