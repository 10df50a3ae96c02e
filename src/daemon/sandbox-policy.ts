import type { AppRow } from '../store/apps.js';
import type { SandboxBucket, SandboxIdentity, SandboxPolicy } from '../sandbox/sandbox-identity.js';
import type { SandboxLimits } from '../sandbox/cgroups.js';
import type { AppUsers } from '../sandbox/app-users.js';
import type { Flavor } from '../core/flavors.js';

export interface FlavorLimits {
  flavor: string;
  limits: SandboxLimits;
}

export function flavorLimits(f: Flavor): FlavorLimits {
  return { flavor: f.name, limits: { memoryBytes: f.memoryBytes, pids: f.pids, cpuShares: f.cpuShares, cpuWeight: f.cpuWeight } };
}

/**
 * The daemon's answer to "who runs this app's processes, with what": the app's own user
 * (created on first use), the limits of its flavours, the toolchain cache read-only, and for
 * the processes of a release the FS buckets the app names.
 */
export function makeSandboxPolicy(o: {
  appUsers: AppUsers;
  toolchainCacheDir: string;
  instanceLimits(app: AppRow): FlavorLimits;
  buildLimits(app: AppRow): FlavorLimits;
  /** The FS buckets a release's sandboxes mount (src/addons/fs-bucket/app-buckets.ts); builds get none. */
  bucketsOf?(app: AppRow): Promise<SandboxBucket[]>;
}): SandboxPolicy {
  const sandbox = async (app: AppRow, limits: FlavorLimits): Promise<SandboxIdentity> => {
    const user = await o.appUsers.ensure(app.id);
    return { user: { uid: user.uid, gid: user.gid }, limits: limits.limits, flavor: limits.flavor, readOnlyPaths: [o.toolchainCacheDir] };
  };
  return {
    instance: async (app) => {
      const identity = await sandbox(app, o.instanceLimits(app));
      const buckets = (await o.bucketsOf?.(app)) ?? [];
      return buckets.length > 0 ? { ...identity, buckets } : identity;
    },
    build: (app) => sandbox(app, o.buildLimits(app)),
  };
}
