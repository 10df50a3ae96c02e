import type { SandboxIdentity } from './sandbox-identity.js';
import type { SandboxSpec } from './oci-config.js';

/** The writable scratch of a release's processes, and their HOME: a tmpfs, empty at every start. */
export const RELEASE_SCRATCH = '/tmp';

/**
 * The sandbox of a process of a release (an instance, a worker, a cron job, a run hook, a
 * one-off command): the release folder read-only at its own path, so nothing the running app
 * writes can survive a restart or follow a rollback; the shared read-only folders; a private
 * /tmp of a quarter of the memory limit, the only writable place (HOME points there), new at
 * every start. Only CC_PRE_RUN_HOOK, a deployment step that runs once before any instance,
 * may still finish preparing the release (`releaseWritable`).
 */
export function releaseSandboxSpec(o: {
  releaseDir: string;
  sandbox: SandboxIdentity;
  args: string[];
  env: Record<string, string>;
  hostname: string;
  networkNamespacePath: string;
  releaseWritable?: boolean;
}): Omit<SandboxSpec, 'cgroupsPath'> {
  return {
    args: o.args,
    env: o.env,
    cwd: o.releaseDir,
    user: o.sandbox.user,
    hostname: o.hostname,
    mounts: [
      { destination: o.releaseDir, source: o.releaseDir, writable: o.releaseWritable === true },
      ...o.sandbox.readOnlyPaths.map((p) => ({ destination: p, source: p, writable: false })),
    ],
    networkNamespacePath: o.networkNamespacePath,
    tmpBytes: Math.floor(o.sandbox.limits.memoryBytes / 4),
    openFiles: 16_384,
  };
}
