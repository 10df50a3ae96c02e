import { humanSize } from '../shared/human-size.js';
import { ValidationError } from './errors.js';

/**
 * The reference service's flavours: how much memory, how many tasks (processes and threads)
 * and what CPU share an instance or a build gets.
 *
 * The CPU share is one relative number, `cpu` (1 = one ordinary share, what any process outside
 * a limited group gets), written in both units the kernel knows: cgroup v1 `cpu.shares` (1024 is
 * ordinary) and cgroup v2 `cpu.weight` (100 is ordinary), the same correspondence systemd uses
 * between CPUShares= and CPUWeight=. A share only matters when the CPU is contended: alone on the
 * machine, a sandbox of any flavour gets every core.
 */
export interface Flavor {
  /** Canonical name, as printed. */
  name: string;
  memoryBytes: number;
  /** Tasks the sandbox may hold at once (threads count). */
  pids: number;
  /** Relative CPU share: 1 = one ordinary share. */
  cpu: number;
  /** `cpu` on cgroup v1's scale (`cpu.shares`, 2..262144). */
  cpuShares: number;
  /** `cpu` on cgroup v2's scale (`cpu.weight`, 1..10000). */
  cpuWeight: number;
}

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

const ORDINARY_CPU_SHARES = 1024;
const ORDINARY_CPU_WEIGHT = 100;

const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));

/** One relative CPU number in both cgroup units. */
export function cpuUnits(cpu: number): { cpu: number; cpuShares: number; cpuWeight: number } {
  return {
    cpu,
    cpuShares: clamp(Math.round(cpu * ORDINARY_CPU_SHARES), 2, 262144),
    cpuWeight: clamp(Math.round(cpu * ORDINARY_CPU_WEIGHT), 1, 10000),
  };
}

function flavor(name: string, memoryBytes: number, pids: number, cpu: number): Flavor {
  return { name, memoryBytes, pids, ...cpuUnits(cpu) };
}

/**
 * Memory and CPU double at each step. The process limit follows the memory up to M and then
 * stops growing: it protects the machine's PID space, which every app shares (pid_max is 32768
 * on a small machine), and 4096 tasks is already far beyond what one app needs.
 */
export const FLAVORS: readonly Flavor[] = [
  flavor('pico', 256 * MiB, 256, 0.25),
  flavor('nano', 512 * MiB, 512, 0.5),
  flavor('XS', 1 * GiB, 1024, 1),
  flavor('S', 2 * GiB, 2048, 2),
  flavor('M', 4 * GiB, 4096, 4),
  flavor('L', 8 * GiB, 4096, 8),
  flavor('XL', 16 * GiB, 4096, 16),
];

export const DEFAULT_INSTANCE_FLAVOR = 'nano';
export const DEFAULT_BUILD_FLAVOR = 'S';

/** "pico (256 MiB)". */
export function describeFlavor(f: Flavor): string {
  return `${f.name} (${humanSize(f.memoryBytes)})`;
}

/** Every flavour with its memory, for messages that list the valid names. */
export function flavorList(): string {
  return FLAVORS.map(describeFlavor).join(', ');
}

/** A flavour by name, case-insensitive; the error lists the valid ones. */
export function flavorNamed(name: unknown): Flavor {
  const found = typeof name === 'string' ? FLAVORS.find((f) => f.name.toLowerCase() === name.trim().toLowerCase()) : undefined;
  if (!found) {
    const seen =
      typeof name === 'string'
        ? JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name)
        : `(${name === null ? 'null' : typeof name})`;
    throw new ValidationError(`Unknown flavour ${seen}.`, `Flavours: ${flavorList()}.`);
  }
  return found;
}

/**
 * The CPU share of every build, whatever its flavour: a quarter of the smallest instance's.
 *
 * A build (npm install, sbt compile) is a batch job that will take every core it can for
 * minutes, while an instance answers requests that someone is waiting for. Shares are weights
 * between the sandboxes that want CPU at the same moment, so a build given less than any
 * instance yields to the serving apps when the machine is busy, and still uses every idle core
 * when it is not (a share is not a cap, so builds are not slower on a quiet machine). With a
 * quarter of the smallest instance's, even a pico instance keeps half of the contended CPU
 * against four builds at once. The build's flavour still sets its memory and process limits.
 */
export function buildCpu(): { cpu: number; cpuShares: number; cpuWeight: number } {
  const smallestInstanceCpu = Math.min(...FLAVORS.map((f) => f.cpu));
  return cpuUnits(smallestInstanceCpu / 4);
}

/** What a build of a flavour gets: the flavour's memory and tasks, the build CPU share. */
export function buildLimits(flavor: Flavor): Flavor {
  return { ...flavor, ...buildCpu() };
}
