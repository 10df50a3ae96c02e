import { readFileSync, statfsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** What the kernel says of an add-on server's process: who it runs as and what limits its memory. */

/** The pid a Redis add-on's server wrote in its folder. */
export function redisPid(dataDir: string, addonId: string): number {
  return Number(readFileSync(join(dataDir, 'redis', addonId, 'redis.pid'), 'utf8').trim());
}

export function processUid(pid: number): number {
  return Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
}

/** The process' memory control group (v1 memory hierarchy, or the v2 unified one), as a folder. */
export function memoryGroup(pid: number): string {
  const v2 = statfsSync('/sys/fs/cgroup').type === 0x63677270;
  const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n');
  const line = lines.find((l) => (v2 ? l.startsWith('0::') : /^\d+:([^:]*,)?memory(,[^:]*)?:/.test(l)));
  if (!line) throw new Error(`no memory control group for pid ${pid}`);
  const path = line.slice(line.indexOf(':', line.indexOf(':') + 1) + 1);
  return v2 ? join('/sys/fs/cgroup', path) : join('/sys/fs/cgroup/memory', path);
}

/**
 * The memory limit over the process: slipway writes it one level above the group the process
 * sits in (`<add-on>/run`), which the kernel applies to everything below.
 */
export function memoryLimitOver(pid: number): number {
  const group = dirname(memoryGroup(pid));
  const v2 = statfsSync('/sys/fs/cgroup').type === 0x63677270;
  return Number(readFileSync(join(group, v2 ? 'memory.max' : 'memory.limit_in_bytes'), 'utf8'));
}
