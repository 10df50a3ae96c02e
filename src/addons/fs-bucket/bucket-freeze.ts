import { runCaptured } from '../../executor/run-captured.js';
import { SYSTEM_TOOL_ENV } from '../../executor/system-tools.js';

/**
 * `fsfreeze` on a bucket's mount point: frozen, the filesystem has written everything out (its
 * journal too, so the image is a clean filesystem) and every write waits in the kernel until it
 * is thawed. Nothing inside the bucket is named.
 */
export function freezeArgv(mountPoint: string, frozen: boolean): string[] {
  return ['fsfreeze', frozen ? '--freeze' : '--unfreeze', mountPoint];
}

/**
 * Runs `copy` with the bucket frozen and thaws it as soon as `copy` ends, whatever happens (a
 * daemon that stops meanwhile leaves it frozen: the next start thaws every bucket, `thaw`).
 * Resolves with what `copy` gave and how long writes were held.
 */
export async function whileFrozen<T>(mountPoint: string, copy: () => Promise<T>): Promise<{ result: T; frozenMs: number }> {
  const frozen = await runCaptured({ argv: freezeArgv(mountPoint, true), cwd: '/', env: SYSTEM_TOOL_ENV, timeoutMs: 60_000 });
  if (frozen.exitCode !== 0) throw new Error(`fsfreeze could not freeze the bucket: ${frozen.stderr.trim() || `exit ${frozen.exitCode}`}`);
  const start = process.hrtime.bigint();
  try {
    const result = await copy();
    return { result, frozenMs: Number(process.hrtime.bigint() - start) / 1e6 };
  } finally {
    await thaw(mountPoint);
  }
}

/** Thaws the bucket; true when it was frozen. One not frozen (EINVAL) is left as it is. */
export async function thaw(mountPoint: string): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    const thawed = await runCaptured({ argv: freezeArgv(mountPoint, false), cwd: '/', env: SYSTEM_TOOL_ENV, timeoutMs: 60_000 });
    if (thawed.exitCode === 0) return true;
    if (/Invalid argument/.test(thawed.stderr)) return false;
    // Anything else (the tool killed, the system busy) is tried again: a frozen bucket stops its apps.
    if (attempt >= 5) throw new Error(`fsfreeze could not thaw the bucket: ${thawed.stderr.trim() || `exit ${thawed.exitCode}`}`);
    await new Promise((r) => setTimeout(r, 200 * attempt));
  }
}
