import type { SandboxBucket, SandboxIdentity } from './sandbox-identity.js';
import type { SandboxStartSpec } from './sandbox-host.js';

/**
 * The sandbox of a process of a release (an instance, a worker, a run hook, a one-off
 * command): the release folder at its own path, read-only below what its CC_PRE_RUN_HOOK
 * wrote (when it wrote anything, read-only too) and a writable layer (the
 * sandbox's own, or its instance's: what the app writes there is gone when that ends; the
 * release never changes: sandbox-layer.ts), the shared read-only folders, a private /tmp of a quarter of the
 * memory limit.
 */
export function releaseSandboxSpec(o: {
  appId: string;
  releaseDir: string;
  /** The id of a layer several sandboxes use in turn (an instance's); without it, the sandbox's own. */
  sharedLayer?: string;
  /** What the release's CC_PRE_RUN_HOOK wrote (ReleaseSpec.preRunLayer): read-only above the release. */
  preRunLayer?: string;
  /** The pre-run hook's sandbox: its writes go to this folder, kept to become the release's pre-run layer. */
  captureLayer?: string;
  sandbox: SandboxIdentity;
  args: string[];
  env: Record<string, string>;
  hostname: string;
  networkNamespacePath: string;
}): SandboxStartSpec {
  return {
    args: o.args,
    env: o.env,
    cwd: o.releaseDir,
    user: o.sandbox.user,
    hostname: o.hostname,
    mounts: o.sandbox.readOnlyPaths.map((p) => ({ destination: p, source: p, writable: false })),
    layered: { folder: o.releaseDir, appId: o.appId, shared: o.sharedLayer, preRun: o.preRunLayer, capture: o.captureLayer },
    ...bucketMounts(o.releaseDir, o.sandbox.buckets ?? []),
    networkNamespacePath: o.networkNamespacePath,
    tmpBytes: Math.floor(o.sandbox.limits.memoryBytes / 4),
    openFiles: 16_384,
  };
}

/**
 * The FS buckets as mounts inside the release's folder, after its layer, and their groups.
 * A bucket's path is checked where it is read (src/addons/fs-bucket/bucket-variables.ts); it is
 * checked again here, the last step before root mounts it.
 */
export function bucketMounts(
  releaseDir: string,
  buckets: readonly SandboxBucket[],
): { sharedFolders?: Array<{ destination: string; source: string; writable: true }>; groups?: number[] } {
  if (buckets.length === 0) return {};
  return {
    sharedFolders: buckets.map((b) => {
      const parts = b.path.split('/');
      if (b.path === '' || parts.some((p) => p === '' || p === '.' || p === '..')) {
        throw new Error(`A bucket is mounted inside the app's folder, by a plain relative path: not ${JSON.stringify(b.path)}.`);
      }
      return { destination: `${releaseDir}/${b.path}`, source: b.source, writable: true as const };
    }),
    groups: [...new Set(buckets.map((b) => b.gid))],
  };
}
