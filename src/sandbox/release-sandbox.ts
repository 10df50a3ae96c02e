import type { SandboxIdentity } from './sandbox-identity.js';
import type { SandboxSpec } from './oci-config.js';

/**
 * The sandbox of a process of a release (an instance, a worker, a run hook, a one-off
 * command): the release folder writable at its own path, the shared read-only folders, a
 * private /tmp of a quarter of the memory limit.
 */
export function releaseSandboxSpec(o: {
  releaseDir: string;
  sandbox: SandboxIdentity;
  args: string[];
  env: Record<string, string>;
  hostname: string;
  networkNamespacePath: string;
}): Omit<SandboxSpec, 'cgroupsPath'> {
  return {
    args: o.args,
    env: o.env,
    cwd: o.releaseDir,
    user: o.sandbox.user,
    hostname: o.hostname,
    mounts: [
      { destination: o.releaseDir, source: o.releaseDir, writable: true },
      ...o.sandbox.readOnlyPaths.map((p) => ({ destination: p, source: p, writable: false })),
    ],
    networkNamespacePath: o.networkNamespacePath,
    tmpBytes: Math.floor(o.sandbox.limits.memoryBytes / 4),
    openFiles: 16_384,
  };
}
