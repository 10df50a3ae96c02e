import { createHash } from 'node:crypto';
import { describeExit } from '../executor/run-command.js';
import { humanSize } from '../shared/human-size.js';
import type { SandboxLimits } from './cgroups.js';

/** How a sandboxed process ended, naming the memory limit when the kernel killed it for it. */
export function describeSandboxExit(
  exit: { exitCode: number | null; signal: string | null; outOfMemory: boolean; timedOut?: boolean; aborted?: boolean },
  sandbox: { limits: SandboxLimits; flavor: string },
): string {
  if (exit.outOfMemory && !exit.aborted && !exit.timedOut) {
    return `was killed: out of memory: limit ${humanSize(sandbox.limits.memoryBytes)} (flavour ${sandbox.flavor})`;
  }
  return describeExit(exit);
}

/**
 * Sandbox (runc container and cgroup) ids: lower-case, from a platform id (`instance_<uuid>`
 * gives `i-<uuid>`, readable in `runc list`; any other id is hashed) and a suffix.
 */
export function sandboxIdFor(platformId: string, suffix?: string): string {
  const m = /^([a-z]+)_([0-9a-f-]{36})$/.exec(platformId);
  const base = m ? `${m[1]![0]}-${m[2]}` : `x-${createHash('sha256').update(platformId).digest('hex').slice(0, 32)}`;
  const id = `${base}${suffix ? `-${suffix}` : ''}`;
  if (!/^[a-z][a-z0-9-]{0,62}$/.test(id)) throw new Error(`Invalid sandbox suffix ${JSON.stringify(suffix)}.`);
  return id;
}
