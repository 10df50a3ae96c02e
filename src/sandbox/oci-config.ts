/**
 * The sandbox every build step, instance and one-off command of an app runs in, written as an
 * OCI runtime `config.json` (the format runc, crun and every container engine read). Pure
 * data built from a SandboxSpec, so what a sandbox may see and do is tested as data, and a
 * release can later run unchanged as an OCI image on a cluster engine.
 *
 * The shape: the host's system (/usr, /etc) read-only, a root file system of its own that is
 * read-only too, a private /tmp, the shared toolchains read-only, and only the app's own
 * folders writable (a release only through a writable layer of the sandbox's own, `layers`); its own PID, IPC, UTS and mount namespaces; a network namespace made by
 * the platform (or a new empty one); no capabilities, no_new_privs, a seccomp filter, the
 * app's own unprivileged uid and gid with no supplementary groups.
 */
import { SANDBOX_SECCOMP } from './seccomp-profile.js';

export interface SandboxMount {
  /** Absolute path inside the sandbox. */
  destination: string;
  /** Absolute path on the host. */
  source: string;
  writable: boolean;
}

/**
 * A folder the sandbox sees writable at `destination` while the folder itself stays as it is:
 * an overlay mount, made by the runtime inside the sandbox's mount namespace, with `lower`
 * read-only below and the sandbox's writes going to `upper` (`work` is overlayfs' own; both
 * on one filesystem, fresh for each sandbox and removed with it). A release runs this way: what
 * an app writes into its folder lasts as long as the process that wrote it, as on a dyno.
 */
export interface SandboxLayer {
  destination: string;
  lower: string;
  /**
   * A read-only layer between `lower` and `upper`: what the release's CC_PRE_RUN_HOOK wrote,
   * kept with the release (src/pipeline/pre-run-layer.ts).
   */
  preRun?: string;
  upper: string;
  work: string;
}

export interface SandboxSpec {
  /** Argv run inside the sandbox, after its init (tini), which forwards signals and reaps. */
  args: string[];
  env: Record<string, string>;
  /** Working directory inside the sandbox. */
  cwd: string;
  user: { uid: number; gid: number };
  hostname: string;
  /** Folders of the app (build, release, cache, home) and the shared toolchains. */
  mounts: SandboxMount[];
  /** Folders seen writable over a read-only original (mounted after `mounts`). */
  layers?: SandboxLayer[];
  /**
   * Folders several sandboxes share read-write (the FS buckets), mounted last: their
   * destinations are inside a layer's folder.
   */
  sharedFolders?: SandboxMount[];
  /** Groups the process holds besides its own (the FS buckets' groups); none by default. */
  groups?: number[];
  /**
   * A folder holding the sandbox's own `passwd` and `group` (identity-files.ts): the sandbox sees
   * the system's accounts and its own, not every app user of the machine. The sandbox's /etc is
   * then a read-only overlay of this folder over the host's /etc, not the host's /etc with files
   * bound over two of its entries: `useradd` and `userdel` replace /etc/passwd by a rename, and a
   * rename over a file that is a mount point in another namespace detaches that mount, so every
   * running sandbox would have seen the host's whole /etc/passwd from the next app created or
   * deleted on.
   */
  identityFolder?: string;
  /** Path of a network namespace to join (`/run/netns/<name>`), or none: a new, empty one. */
  networkNamespacePath?: string;
  /** cgroup path given to the runtime: the runtime's own group, inside slipway's limited one. */
  cgroupsPath: string;
  /** Size of the private /tmp (its pages count against the memory limit). */
  tmpBytes: number;
  /** Open files allowed to each process (cannot exceed the daemon's own hard limit). */
  openFiles: number;
}

/** tini from Debian: a minimal init that forwards every signal to the app and reaps zombies. */
export const SANDBOX_INIT = '/usr/bin/tini';

/** The host's system, shared read-only with every sandbox. */
export const SYSTEM_MOUNTS: readonly SandboxMount[] = [
  { destination: '/usr', source: '/usr', writable: false },
  { destination: '/etc', source: '/etc', writable: false },
];

/** Debian's merged /usr: these are symbolic links in every root file system we make. */
export const ROOT_SYMLINKS: Readonly<Record<string, string>> = {
  bin: 'usr/bin',
  sbin: 'usr/sbin',
  lib: 'usr/lib',
  lib64: 'usr/lib64',
};

const NO_CAPABILITIES = { bounding: [], effective: [], permitted: [], inheritable: [], ambient: [] };

/** What /proc and /sys expose of the host that a tenant has no business reading. */
const MASKED_PATHS = [
  '/proc/acpi',
  '/proc/asound',
  '/proc/interrupts',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
];
const READONLY_PATHS = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

export type OciConfig = ReturnType<typeof ociConfig>;

function checkAbsolute(what: string, path: string): string {
  if (!path.startsWith('/') || path.split('/').includes('..') || path.includes('\0')) {
    throw new Error(`The sandbox ${what} must be an absolute path without "..", not ${JSON.stringify(path)}.`);
  }
  return path;
}

function bindMount(m: SandboxMount) {
  return {
    destination: checkAbsolute('mount destination', m.destination),
    type: 'bind',
    source: checkAbsolute('mount source', m.source),
    options: ['rbind', m.writable ? 'rw' : 'ro', 'nosuid', 'nodev'],
  };
}

/**
 * overlayfs reads its options as `key=value` pairs split at commas, and lower folders split at
 * colons: a path holding either (or a backslash, its escape) would be read as something else.
 */
function layerPath(what: string, path: string): string {
  checkAbsolute(what, path);
  if (/[,:\\]/.test(path)) throw new Error(`The sandbox ${what} must not hold a comma, a colon or a backslash: ${JSON.stringify(path)}.`);
  return path;
}

/** The host's /etc, read-only, with the sandbox's own passwd and group above it (SandboxSpec.identityFolder). */
function etcWithIdentity(identityFolder: string) {
  return {
    destination: '/etc',
    type: 'overlay',
    source: 'overlay',
    // Lower folders only, no upper one: overlayfs mounts it read-only.
    options: [`lowerdir=${layerPath('identity folder', identityFolder)}:/etc`, 'nosuid', 'nodev'],
  };
}

function overlayMount(l: SandboxLayer) {
  return {
    destination: checkAbsolute('layer destination', l.destination),
    type: 'overlay',
    source: 'overlay',
    options: [
      // The first lower folder is the top one: the pre-run layer above the release.
      `lowerdir=${l.preRun === undefined ? '' : `${layerPath('layer pre-run folder', l.preRun)}:`}${layerPath('layer lower folder', l.lower)}`,
      `upperdir=${layerPath('layer upper folder', l.upper)}`,
      `workdir=${layerPath('layer work folder', l.work)}`,
      'nosuid',
      'nodev',
    ],
  };
}

export function ociConfig(spec: SandboxSpec) {
  const { uid, gid } = spec.user;
  if (!Number.isInteger(uid) || !Number.isInteger(gid) || uid <= 0 || gid <= 0) {
    throw new Error(`A sandbox never runs as root: got uid ${uid} gid ${gid}.`);
  }
  if (spec.args.length === 0 || spec.args[0] === '') throw new Error('A sandbox needs a command to run.');
  const groups = [...new Set(spec.groups ?? [])];
  for (const group of groups) {
    // Below 1000 are the system's groups (disk, shadow...): no sandbox may hold one.
    if (!Number.isInteger(group) || group < 1000 || group === 65534) throw new Error(`A sandbox never holds a system group: got ${group}.`);
  }
  const namespaces: Array<{ type: string; path?: string }> = [{ type: 'pid' }, { type: 'ipc' }, { type: 'uts' }, { type: 'mount' }];
  namespaces.push(
    spec.networkNamespacePath
      ? { type: 'network', path: checkAbsolute('network namespace', spec.networkNamespacePath) }
      : { type: 'network' },
  );
  return {
    ociVersion: '1.0.2',
    process: {
      terminal: false,
      user: { uid, gid, additionalGids: groups },
      // -g: signals go to the app's whole process group; -s is not needed as PID 1.
      args: [SANDBOX_INIT, '-g', '--', ...spec.args],
      env: Object.entries(spec.env).map(([k, v]) => `${k}=${v}`),
      cwd: checkAbsolute('working directory', spec.cwd),
      noNewPrivileges: true,
      capabilities: NO_CAPABILITIES,
      rlimits: [{ type: 'RLIMIT_NOFILE', hard: spec.openFiles, soft: spec.openFiles }],
      oomScoreAdj: 500,
    },
    root: { path: 'rootfs', readonly: true },
    hostname: spec.hostname,
    mounts: [
      { destination: '/proc', type: 'proc', source: 'proc', options: ['nosuid', 'noexec', 'nodev'] },
      { destination: '/dev', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'strictatime', 'mode=755', 'size=65536k'] },
      {
        destination: '/dev/pts',
        type: 'devpts',
        source: 'devpts',
        options: ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620'],
      },
      { destination: '/dev/shm', type: 'tmpfs', source: 'shm', options: ['nosuid', 'noexec', 'nodev', 'mode=1777', 'size=65536k'] },
      { destination: '/dev/mqueue', type: 'mqueue', source: 'mqueue', options: ['nosuid', 'noexec', 'nodev'] },
      { destination: '/sys', type: 'sysfs', source: 'sysfs', options: ['nosuid', 'noexec', 'nodev', 'ro'] },
      {
        destination: '/tmp',
        type: 'tmpfs',
        source: 'tmpfs',
        options: ['nosuid', 'nodev', 'mode=1777', `size=${Math.max(1, Math.floor(spec.tmpBytes / 1024))}k`],
      },
      ...(spec.identityFolder
        ? [...SYSTEM_MOUNTS.filter((m) => m.destination !== '/etc').map(bindMount), etcWithIdentity(spec.identityFolder)]
        : SYSTEM_MOUNTS.map(bindMount)),
      ...spec.mounts.map(bindMount),
      ...(spec.layers ?? []).map(overlayMount),
      ...(spec.sharedFolders ?? []).map(bindMount),
    ],
    linux: {
      namespaces,
      cgroupsPath: spec.cgroupsPath,
      // Limits are set by slipway on the group above this one (see cgroups.ts), where they
      // outlive the runtime's own group and an out-of-memory kill can still be read.
      resources: { devices: [{ allow: false, access: 'rwm' }] },
      maskedPaths: MASKED_PATHS,
      readonlyPaths: READONLY_PATHS,
      seccomp: SANDBOX_SECCOMP,
    },
  };
}
