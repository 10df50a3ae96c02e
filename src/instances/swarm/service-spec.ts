import { createHash } from 'node:crypto';
import type { SandboxIdentity } from '../../sandbox/sandbox-identity.js';
import { bucketMounts } from '../../sandbox/release-sandbox.js';
import { taskBucketMount } from './bucket-server-config.js';

export const LABEL_OWNER = 'slipway.owner';
export const LABEL_INSTANCE = 'slipway.instance';
export const LABEL_ROLE = 'slipway.role';
/** What a later daemon needs to adopt a service (adoption.ts): its key, marker and spec, and each slot's holder. */
export const LABEL_KEY = 'slipway.key';
export const LABEL_MARKER = 'slipway.marker';
export const LABEL_SPEC = 'slipway.spec';
export const LABEL_SLOT_PREFIX = 'slipway.slot.';

/** Room for a slot's identity (two variables) in its tmpfs. */
const IDENTITY_TMPFS_BYTES = 64 * 1024;

/** Docker counts durations in nanoseconds. */
export const NS_PER_MS = 1_000_000;

const RESTART_CONDITIONS = { always: 'any', 'on-failure': 'on-failure', no: 'none' } as const;

/** The sandbox's init: forwards SIGTERM to the app and reaps orphans, as in the local sandbox. */
const INIT = ['/usr/bin/tini', '--'];

export interface ServiceSpecInput {
  /** The swarm service's name (see serviceName). */
  name: string;
  /** Which daemon owns the service: a restarted daemon removes its own leftovers only. */
  owner: string;
  role: 'instance' | 'worker' | 'run';
  /** A worker's restart policy (CC_WORKER_RESTART); instances restart after any exit. */
  restart?: 'always' | 'on-failure' | 'no';
  appId: string;
  deploymentId: string;
  /** A worker's instance; a release's service holds many instances (its replicas). */
  instanceId?: string;
  /** Labels a later daemon adopts the service by (adoption.ts); none for a one-off command's job. */
  adoption?: Record<string, string>;
  image: string;
  /** Run under tini as given when `entrypoint` is set, otherwise through `env -u HOSTNAME`. */
  command: string[];
  /** The task's own start-up (task-entrypoint.ts): `command` is then its argv as is. */
  entrypoint?: boolean;
  /** A job: one task run to its end, never restarted (a one-off command). */
  job?: boolean;
  /** Tasks of the service (default 1). */
  replicas?: number;
  /** A small tmpfs of the task's own, writable by the app's user, where the daemon writes the slot's identity. */
  identityMount?: string;
  env: Record<string, string>;
  workingDir: string;
  sandbox: SandboxIdentity;
  network: string;
  restartDelayMs: number;
  stopGraceMs: number;
}

/**
 * A Swarm service of a release (its instances are the replicas) or of a worker: the app's image,
 * its exact environment, its own uid, no capabilities, the container's private writable layer
 * (the app folder writable as in the local sandbox, nothing kept after the task) with a
 * private /tmp of a quarter of the memory limit (as the local sandbox), the flavour as memory,
 * process and CPU limits. Swarm restarts a task after any exit, like the local supervisor.
 */
export function serviceSpec(i: ServiceSpecInput): Record<string, unknown> {
  const { limits } = i.sandbox;
  const tmp = isUnder(i.workingDir, '/tmp')
    ? []
    : [
        {
          Type: 'tmpfs',
          Target: '/tmp',
          TmpfsOptions: { SizeBytes: Math.max(1024 * 1024, Math.floor(limits.memoryBytes / 4)), Mode: 0o1777 },
        },
      ];
  const identity = i.identityMount
    ? [{ Type: 'tmpfs', Target: i.identityMount, TmpfsOptions: { SizeBytes: IDENTITY_TMPFS_BYTES, Mode: 0o1777 } }]
    : [];
  // FS buckets: each the node's volume of it (node-bucket-mounts.ts), with its group.
  const buckets = bucketMounts(i.workingDir, i.sandbox.buckets ?? []);
  const bucketVolumes = (buckets.sharedFolders ?? []).map((f, n) =>
    taskBucketMount(i.owner, i.sandbox.buckets![n]!.source, i.sandbox.user.uid, f.destination),
  );
  return {
    Name: i.name,
    Labels: {
      [LABEL_OWNER]: i.owner,
      [LABEL_ROLE]: i.role,
      'slipway.app': i.appId,
      'slipway.deployment': i.deploymentId,
      ...(i.instanceId === undefined ? {} : { [LABEL_INSTANCE]: i.instanceId }),
      ...i.adoption,
    },
    TaskTemplate: {
      ContainerSpec: {
        Image: i.image,
        // Docker adds HOSTNAME to the environment; the app gets exactly the variables it was given.
        Command: [
          ...INIT,
          ...(i.entrypoint ? i.command : ['/usr/bin/env', ...('HOSTNAME' in i.env ? [] : ['-u', 'HOSTNAME']), '--', ...i.command]),
        ],
        Env: Object.entries(i.env).map(([k, v]) => `${k}=${v}`),
        Dir: i.workingDir,
        User: `${i.sandbox.user.uid}:${i.sandbox.user.gid}`,
        Hostname: i.role === 'run' ? 'run' : 'instance',
        // The container's own writable layer is the task's private one: the app writes into its
        // folder (part of the image, owned by its user) as it does in a local sandbox, and what
        // it writes is gone with the task; the rest of the image belongs to root.
        ReadOnly: false,
        // A release kept under /tmp (tests) lives in the image there: a tmpfs would hide it.
        Mounts: [...tmp, ...identity, ...bucketVolumes],
        ...(buckets.groups ? { Groups: buckets.groups.map(String) } : {}),
        CapabilityDrop: ['ALL'],
        StopSignal: 'SIGTERM',
        StopGracePeriod: i.stopGraceMs * NS_PER_MS,
        Ulimits: [{ Name: 'nofile', Soft: 16_384, Hard: 16_384 }],
      },
      Resources: {
        Limits: { MemoryBytes: limits.memoryBytes, Pids: limits.pids, NanoCPUs: nanoCpus(limits.cpuShares) },
      },
      RestartPolicy: i.job
        ? { Condition: 'none' }
        : { Condition: RESTART_CONDITIONS[i.restart ?? 'always'], Delay: i.restartDelayMs * NS_PER_MS, MaxAttempts: 0 },
      Networks: [{ Target: i.network }],
    },
    Mode: i.job ? { ReplicatedJob: { MaxConcurrent: 1, TotalCompletions: 1 } } : { Replicated: { Replicas: i.replicas ?? 1 } },
  };
}

/**
 * A CPU limit from the flavour's weight: 1024 shares (an ordinary share) is one CPU. The local
 * sandbox only weighs CPU time between apps; a cluster node has no such shared pool, so the
 * weight becomes a ceiling, never below a tenth of a CPU.
 */
export function nanoCpus(cpuShares: number): number {
  return Math.max(100_000_000, Math.round((cpuShares / 1024) * 1e9));
}

/**
 * Service names: at most 63 letters, digits and dashes; ids are longer, so a digest stands in.
 * `r`: a release's service (the digest of what its replicas share, then a generation, of this
 * daemon's run: a release started again while its previous service, maybe an adopted one, is
 * still going gets a new one); `w`: a worker;
 * `o`: a one-off command.
 */
export function serviceName(owner: string, kind: 'r' | 'w' | 'o', id: string, step: number | string = 0): string {
  const digest = createHash('sha256').update(`${id}\n${step}`).digest('hex').slice(0, 24);
  return `${owner}-${kind}-${digest}`;
}

/** Owner names become part of service names: lowercase letters and digits, 1 to 20. */
export function validateOwner(owner: string): string {
  if (!/^[a-z][a-z0-9]{0,19}$/.test(owner))
    throw new Error(
      `The swarm owner name must be 1-20 lowercase letters and digits, starting with a letter, not ${JSON.stringify(owner)}.`,
    );
  return owner;
}

function isUnder(path: string, folder: string): boolean {
  return path === folder || path.startsWith(`${folder}/`);
}
