import type { SandboxIdentity } from './sandbox-identity.js';
import type { SandboxStartSpec } from './sandbox-host.js';

/**
 * The sandbox of a process of a release (an instance, a worker, a run hook, a one-off
 * command): the release folder at its own path, read-only below a writable layer of this
 * sandbox's own (what the app writes there is gone when the sandbox ends; the release never
 * changes: sandbox-layer.ts), the shared read-only folders, a private /tmp of a quarter of the
 * memory limit.
 */
export function releaseSandboxSpec(o: {
  appId: string;
  releaseDir: string;
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
    layered: { folder: o.releaseDir, appId: o.appId },
    networkNamespacePath: o.networkNamespacePath,
    tmpBytes: Math.floor(o.sandbox.limits.memoryBytes / 4),
    openFiles: 16_384,
  };
}
