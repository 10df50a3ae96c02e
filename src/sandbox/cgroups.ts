/**
 * The control group each sandbox is limited by. slipway creates one group per sandbox under a
 * root of its own and writes its limits there; the OCI runtime then makes its own group inside
 * it for the sandbox's processes. The limits live one level above the runtime's group so that
 * they hold for everything the sandbox starts, and so that, after the runtime removed its own
 * group, slipway can still read whether the kernel killed something for lack of memory.
 *
 * Two layouts exist: cgroup v1 (one hierarchy per controller; Debian machines booted with the
 * legacy or hybrid layout, as this one is) and the unified v2 hierarchy (a stock Debian 12).
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type CgroupLayout = 'v1' | 'v2';

export interface SandboxLimits {
  memoryBytes: number;
  /** Tasks (processes and threads) the group may hold at once. */
  pids: number;
  /** Relative CPU weight, cgroup v1 `cpu.shares` scale (1024 = one ordinary share). */
  cpuShares: number;
  /** The same on cgroup v2's `cpu.weight` scale (100 = ordinary); derived from cpuShares when absent. */
  cpuWeight?: number;
}

export interface CgroupFileWrite {
  /** v1: the controller's hierarchy; v2: '' (the single hierarchy). */
  controller: string;
  file: string;
  value: string;
}

const CGROUP2_SUPER_MAGIC = 0x63677270;
const MOUNT = '/sys/fs/cgroup';
/** The v1 controllers slipway sets limits in; the runtime joins every hierarchy by itself. */
export const V1_CONTROLLERS = ['memory', 'pids', 'cpu'] as const;
const GROUP_NAME = /^[a-z][a-z0-9-]{0,62}$/;

export function detectLayout(mount = MOUNT): CgroupLayout {
  return statfsSync(mount).type === CGROUP2_SUPER_MAGIC ? 'v2' : 'v1';
}

/** v1 cpu.shares (2..262144, default 1024) to v2 cpu.weight (1..10000, default 100). */
export function sharesToWeight(shares: number): number {
  const clamped = Math.min(262144, Math.max(2, Math.round(shares)));
  return Math.max(1, Math.min(10000, Math.round(1 + ((clamped - 2) * 9999) / 262142)));
}

/** The files (and values) that put `limits` on a group: tested as data. */
export function limitWrites(layout: CgroupLayout, limits: SandboxLimits): CgroupFileWrite[] {
  const memory = String(Math.floor(limits.memoryBytes));
  if (layout === 'v1') {
    return [
      { controller: 'memory', file: 'memory.limit_in_bytes', value: memory },
      // No swap beyond the limit where the kernel accounts swap (memsw) at all.
      { controller: 'memory', file: 'memory.memsw.limit_in_bytes', value: memory },
      { controller: 'pids', file: 'pids.max', value: String(limits.pids) },
      { controller: 'cpu', file: 'cpu.shares', value: String(Math.round(limits.cpuShares)) },
    ];
  }
  return [
    { controller: '', file: 'memory.max', value: memory },
    { controller: '', file: 'memory.swap.max', value: '0' },
    { controller: '', file: 'pids.max', value: String(limits.pids) },
    { controller: '', file: 'cpu.weight', value: String(limits.cpuWeight ?? sharesToWeight(limits.cpuShares)) },
  ];
}

/**
 * slipway's groups: `<root>/<sandbox>`; the runtime's own group is `<root>/<sandbox>/run`.
 * `root` names the daemon (several daemons on one machine keep apart).
 */
export class SandboxCgroups {
  readonly layout: CgroupLayout;

  constructor(
    readonly root: string,
    private readonly mount = MOUNT,
  ) {
    if (!GROUP_NAME.test(root)) throw new Error(`Invalid cgroup root name ${JSON.stringify(root)}.`);
    this.layout = detectLayout(mount);
  }

  /** The path the OCI runtime is given (relative to every hierarchy). */
  runtimePath(sandbox: string): string {
    return `/${this.root}/${checkName(sandbox)}/run`;
  }

  private dirs(controller: string, sandbox?: string): string {
    const base = this.layout === 'v1' ? join(this.mount, controller, this.root) : join(this.mount, this.root);
    return sandbox === undefined ? base : join(base, checkName(sandbox));
  }

  /** Creates the sandbox's group with its limits. */
  create(sandbox: string, limits: SandboxLimits): void {
    if (this.layout === 'v2') {
      // Controllers must be handed down at every level for the limits to be writable.
      enableControllers(this.mount);
      mkdirSync(this.dirs(''), { recursive: true });
      enableControllers(this.dirs(''));
      mkdirSync(this.dirs('', sandbox), { recursive: true });
      enableControllers(this.dirs('', sandbox));
    } else {
      for (const controller of V1_CONTROLLERS) mkdirSync(this.dirs(controller, sandbox), { recursive: true });
    }
    for (const write of limitWrites(this.layout, limits)) {
      const path = join(this.dirs(write.controller, sandbox), write.file);
      // memsw / swap files exist only where the kernel accounts swap.
      if ((write.file.includes('memsw') || write.file.includes('swap')) && !existsSync(path)) continue;
      writeFileSync(path, write.value);
    }
  }

  /**
   * For a process slipway starts itself in a sandbox's group (an add-on's server, no OCI
   * runtime): the `cgroup.procs` files of `<sandbox>/run` in every limited hierarchy, created if
   * missing. Limits stay on `<sandbox>`, one level up, as for the runtime's sandboxes.
   */
  processGroup(sandbox: string): string[] {
    const controllers = this.layout === 'v2' ? [''] : [...V1_CONTROLLERS];
    return controllers.map((controller) => {
      const dir = join(this.dirs(controller, sandbox), 'run');
      mkdirSync(dir, { recursive: true });
      return join(dir, 'cgroup.procs');
    });
  }

  /** The memory limit the group holds (undefined when unknown): what `create` wrote. */
  memoryLimit(sandbox: string): number | undefined {
    try {
      const file =
        this.layout === 'v2' ? join(this.dir2(sandbox), 'memory.max') : join(this.dirs('memory', sandbox), 'memory.limit_in_bytes');
      const value = Number(readFileSync(file, 'utf8'));
      return Number.isFinite(value) ? value : undefined;
    } catch {
      return undefined;
    }
  }

  /** Whether the kernel killed a process of the group because it reached its memory limit. */
  outOfMemory(sandbox: string): boolean {
    const dir = this.dirs('memory', sandbox);
    try {
      if (this.layout === 'v2') {
        const events = readFileSync(join(this.dir2(sandbox), 'memory.events'), 'utf8');
        return Number(/^oom_kill (\d+)$/m.exec(events)?.[1] ?? 0) > 0;
      }
      const control = readFileSync(join(dir, 'memory.oom_control'), 'utf8');
      if (Number(/^oom_kill (\d+)$/m.exec(control)?.[1] ?? 0) > 0) return true;
      // Recent kernels count v1 kills only in the runtime's (already removed) group: the
      // peak usage reaching the limit tells the same.
      const limit = Number(readFileSync(join(dir, 'memory.limit_in_bytes'), 'utf8'));
      const peak = Number(readFileSync(join(dir, 'memory.max_usage_in_bytes'), 'utf8'));
      return peak >= limit - 64 * 1024;
    } catch {
      return false;
    }
  }

  private dir2(sandbox: string): string {
    return this.dirs('', sandbox);
  }

  /** Current memory use of the group in bytes (undefined when unknown). */
  memoryUsage(sandbox: string): number | undefined {
    try {
      const file =
        this.layout === 'v2' ? join(this.dir2(sandbox), 'memory.current') : join(this.dirs('memory', sandbox), 'memory.usage_in_bytes');
      return Number(readFileSync(file, 'utf8'));
    } catch {
      return undefined;
    }
  }

  /**
   * Writes a new CPU share on a running sandbox's group (cpu.shares on v1, cpu.weight on v2):
   * the kernel applies it at once to everything in the group, so a flavour's CPU share changes
   * with no restart. Returns whether it was written.
   */
  setCpuShare(sandbox: string, cpuShares: number, cpuWeight: number): boolean {
    const write = limitWrites(this.layout, { memoryBytes: 0, pids: 0, cpuShares, cpuWeight }).find(
      (w) => w.controller === 'cpu' || w.file === 'cpu.weight',
    );
    if (!write) return false;
    try {
      writeFileSync(join(this.dirs(write.controller, sandbox), write.file), write.value);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * CPU time the group's processes used since it was made, in seconds (undefined when unknown):
   * v2's `cpu.stat` usage_usec; v1's `cpuacct.usage` (ns), in the cpuacct hierarchy (the
   * runtime joins it; it is the cpu one where both are mounted together).
   */
  cpuSeconds(sandbox: string): number | undefined {
    try {
      if (this.layout === 'v2') {
        const stat = readFileSync(join(this.dir2(sandbox), 'cpu.stat'), 'utf8');
        const usec = /^usage_usec (\d+)$/m.exec(stat)?.[1];
        return usec === undefined ? undefined : Number(usec) / 1e6;
      }
      for (const controller of ['cpuacct', 'cpu']) {
        const file = join(this.dirs(controller, sandbox), 'cpuacct.usage');
        if (existsSync(file)) return Number(readFileSync(file, 'utf8')) / 1e9;
      }
      return undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * The memory the group cannot give back at once, in bytes (undefined when unknown): its use
   * less the file cache it has not touched lately (`inactive_file` of memory.stat; v1's
   * hierarchical `total_inactive_file`), the "working set" container runtimes judge memory by.
   * The page cache of files an app reads counts in its use, but the kernel reclaims it before any
   * out-of-memory kill, so it says nothing of the app's need for memory.
   */
  memoryWorkingSet(sandbox: string): number | undefined {
    const usage = this.memoryUsage(sandbox);
    if (usage === undefined || !Number.isFinite(usage)) return undefined;
    try {
      const dir = this.layout === 'v2' ? this.dir2(sandbox) : this.dirs('memory', sandbox);
      const stat = readFileSync(join(dir, 'memory.stat'), 'utf8');
      const key = this.layout === 'v2' ? 'inactive_file' : 'total_inactive_file';
      const inactive = Number(new RegExp(`^${key} (\\d+)$`, 'm').exec(stat)?.[1] ?? 0);
      return Math.max(0, usage - inactive);
    } catch {
      return usage;
    }
  }

  /** Every pid in the group and its children (the memory or unified hierarchy is complete). */
  pids(sandbox: string): number[] {
    const top = this.layout === 'v2' ? this.dir2(sandbox) : this.dirs('memory', sandbox);
    return collectPids(top);
  }

  /** SIGKILL to everything left in the group: what the runtime could not stop. */
  killAll(sandbox: string): void {
    for (const pid of this.pids(sandbox)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }

  /** Removes the group (and groups a runtime left inside it) from every hierarchy. */
  remove(sandbox: string): void {
    for (const top of this.everyHierarchyDir(sandbox)) removeTree(top);
  }

  /** Removes this daemon's (empty) root from every hierarchy: a clean stop leaves no group. */
  removeRoot(): void {
    for (const dir of this.dataPlaneDirs()) removeTree(dir);
    if (this.layout === 'v2') return removeTree(this.dirs(''));
    for (const h of this.hierarchies()) removeTree(join(this.mount, h, this.root));
  }

  /**
   * The group the data plane's own processes join (sandbox monitors, the router's supervisor,
   * add-on servers: executor/data-plane-cgroup.ts), created if missing; returns its
   * `cgroup.procs` files. Beside the sandboxes' root, not in it: on v2 a group that hands
   * controllers down holds no process. On v1 only the hierarchies a service manager tracks
   * processes by (systemd's named one, the unified one of a hybrid layout) matter.
   */
  dataPlaneGroup(): string[] {
    const files: string[] = [];
    for (const dir of this.dataPlaneDirs()) {
      try {
        mkdirSync(dir, { recursive: true });
        files.push(join(dir, 'cgroup.procs'));
      } catch {
        // A hierarchy mounted read-only (a container): the processes stay where they are.
      }
    }
    return files;
  }

  private dataPlaneDirs(): string[] {
    const name = `${this.root}-data-plane`;
    if (this.layout === 'v2') return [join(this.mount, name)];
    return ['systemd', 'unified'].filter((h) => existsSync(join(this.mount, h, 'cgroup.procs'))).map((h) => join(this.mount, h, name));
  }

  /** v1: every mounted hierarchy (the runtime joins all of them, not only the limited ones). */
  private hierarchies(): string[] {
    try {
      return readdirSync(this.mount, { withFileTypes: true })
        .filter((e) => e.isDirectory() && !e.isSymbolicLink())
        .map((e) => e.name);
    } catch {
      return [];
    }
  }

  /** Sandboxes with a group under this root (after a crash: what to kill and remove). */
  list(): string[] {
    const base = this.layout === 'v2' ? this.dirs('') : this.dirs('memory');
    try {
      return readdirSync(base, { withFileTypes: true })
        .filter((e) => e.isDirectory() && GROUP_NAME.test(e.name))
        .map((e) => e.name);
    } catch {
      return [];
    }
  }

  private everyHierarchyDir(sandbox: string): string[] {
    if (this.layout === 'v2') return [this.dir2(sandbox)];
    return this.hierarchies().map((h) => join(this.mount, h, this.root, checkName(sandbox)));
  }
}

function checkName(sandbox: string): string {
  if (!GROUP_NAME.test(sandbox)) throw new Error(`Invalid sandbox name ${JSON.stringify(sandbox)}.`);
  return sandbox;
}

function enableControllers(dir: string): void {
  const available = readFileSync(join(dir, 'cgroup.controllers'), 'utf8').split(/\s+/);
  const wanted = ['memory', 'pids', 'cpu'].filter((c) => available.includes(c));
  try {
    writeFileSync(join(dir, 'cgroup.subtree_control'), wanted.map((c) => `+${c}`).join(' '));
  } catch {
    // Already enabled, or delegated by someone else: the limit writes will tell.
  }
}

function collectPids(dir: string): number[] {
  const found: number[] = [];
  try {
    for (const line of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n')) {
      const pid = Number(line);
      if (Number.isInteger(pid) && pid > 0) found.push(pid);
    }
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) found.push(...collectPids(join(dir, entry.name)));
    }
  } catch {
    // the group is gone
  }
  return found;
}

function removeTree(dir: string): void {
  if (!existsSync(dir)) return;
  try {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) removeTree(join(dir, entry.name));
    }
    rmdirSync(dir);
  } catch {
    // busy (a process still inside) or gone: the next start's sweep retries
  }
}
