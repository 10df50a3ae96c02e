import { ValidationError } from './errors.js';

/**
 * The reference service's flavours: how much memory, how many tasks (processes and threads)
 * and what CPU share an instance or a build gets. The CPU share grows with the size, in cgroup
 * v1 `cpu.shares` units (1024 = one ordinary share); cgroup v2's cpu.weight is derived from it.
 */
export interface Flavor {
  name: string;
  memoryBytes: number;
  /** Tasks the sandbox may hold at once (threads count). */
  pids: number;
  cpuShares: number;
}

const MiB = 1024 * 1024;

export const FLAVORS: readonly Flavor[] = [
  { name: 'pico', memoryBytes: 256 * MiB, pids: 256, cpuShares: 256 },
  { name: 'nano', memoryBytes: 512 * MiB, pids: 512, cpuShares: 512 },
  { name: 'XS', memoryBytes: 1024 * MiB, pids: 1024, cpuShares: 1024 },
  { name: 'S', memoryBytes: 2048 * MiB, pids: 2048, cpuShares: 2048 },
  { name: 'M', memoryBytes: 4096 * MiB, pids: 4096, cpuShares: 4096 },
];

export const DEFAULT_INSTANCE_FLAVOR = 'nano';
export const DEFAULT_BUILD_FLAVOR = 'S';

/** A flavour by name, case-insensitive; the error lists the valid ones. */
export function flavorNamed(name: unknown): Flavor {
  const found = typeof name === 'string' ? FLAVORS.find((f) => f.name.toLowerCase() === name.trim().toLowerCase()) : undefined;
  if (!found) {
    throw new ValidationError(
      `Unknown flavour ${JSON.stringify(name)}.`,
      `Flavours: ${FLAVORS.map((f) => `${f.name} (${f.memoryBytes / MiB >= 1024 ? `${f.memoryBytes / MiB / 1024} GiB` : `${f.memoryBytes / MiB} MiB`})`).join(', ')}.`,
    );
  }
  return found;
}

/**
 * What a build of a flavour gets: its memory and tasks, but a CPU share below that of the
 * smallest serving instance, so a build (which can take every core for minutes) never starves
 * the apps that answer requests; with nothing else running it still gets all the CPU.
 */
export function buildLimits(flavor: Flavor): Flavor {
  const smallestInstanceShare = Math.min(...FLAVORS.map((f) => f.cpuShares));
  return { ...flavor, cpuShares: Math.floor(smallestInstanceShare / 2) };
}
