/**
 * What a swarm service carries so that a later daemon can adopt it as it runs: the daemon keeps
 * nothing on disk about its services, Swarm holds it all in each service's labels.
 *   - `slipway.key`: what its replicas share, digested (a scale after the adoption joins it);
 *   - `slipway.marker`: the word its tasks' entrypoint marks its lines with;
 *   - `slipway.spec`: the release folder, commands and sandbox of its replicas (the environment is
 *     the service's own), and for a worker service its process;
 *   - `slipway.slot.<n>`: which instance holds slot n, and the identity its tasks are told.
 * A slot's label is written when an instance claims the slot and taken away with its replica.
 */
import type { WorkerSpec } from '../backend.js';
import type { SandboxIdentity } from '../../sandbox/sandbox-identity.js';
import { LABEL_KEY, LABEL_MARKER, LABEL_OWNER, LABEL_ROLE, LABEL_SLOT_PREFIX, LABEL_SPEC } from './service-spec.js';
import { SLOT_VARIABLE } from './task-entrypoint.js';

/** What the replicas of a service run, as its label keeps it. */
export interface AdoptionSpec {
  releaseDir: string;
  command: string[];
  beforeStart: string[][];
  sandbox: SandboxIdentity;
  /** A worker service's process. */
  worker?: WorkerSpec;
}

/** Who holds a slot: an instance, or in a worker service the instance the worker runs beside. */
export interface SlotHolder {
  instanceId: string;
  instanceNumber: number;
  /** The per-instance variables (INSTANCE_ID, INSTANCE_NUMBER) the slot's tasks are told. */
  vars: Record<string, string>;
}

/** A service of an earlier daemon, as read back from Swarm. */
export interface FoundService {
  id: string;
  name: string;
  role: 'instance' | 'worker';
  appId: string;
  deploymentId: string;
  key: string;
  marker: string;
  spec: AdoptionSpec;
  /** The environment its replicas share (the slot variable taken out). */
  env: Record<string, string>;
  /** The app's uid:gid, who writes the identity into its tasks. */
  user: string;
  replicas: number;
  holders: Map<number, SlotHolder>;
}

/** The service as the Engine API lists it (the parts adoption reads). */
export interface ListedService {
  ID: string;
  Spec: {
    Name: string;
    Labels?: Record<string, string>;
    Mode?: { Replicated?: { Replicas?: number } };
    TaskTemplate?: { ContainerSpec?: { Env?: string[]; User?: string } };
  };
}

/** The labels a service is created with, besides its owner's and role's. */
export function adoptionLabels(key: string, marker: string, spec: AdoptionSpec): Record<string, string> {
  return { [LABEL_KEY]: key, [LABEL_MARKER]: marker, [LABEL_SPEC]: JSON.stringify(spec) };
}

/** A service's labels with its slot labels replaced by `holders`'. */
export function withHolders(labels: Record<string, string> | undefined, holders: Map<number, SlotHolder>): Record<string, string> {
  const kept = Object.entries(labels ?? {}).filter(([name]) => !name.startsWith(LABEL_SLOT_PREFIX));
  const slots = [...holders].map(([slot, holder]) => [`${LABEL_SLOT_PREFIX}${slot}`, JSON.stringify(holder)] as const);
  return Object.fromEntries([...kept, ...slots]);
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isArgv = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);
const isStringRecord = (v: unknown): v is Record<string, string> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every(isString);

function parse(text: string | undefined): unknown {
  try {
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

function readSpec(text: string | undefined): AdoptionSpec | undefined {
  const v = parse(text) as Partial<AdoptionSpec> | undefined;
  if (!v || !isString(v.releaseDir) || !isArgv(v.command) || !Array.isArray(v.beforeStart) || !v.beforeStart.every(isArgv))
    return undefined;
  const s = v.sandbox as Partial<SandboxIdentity> | undefined;
  if (
    !s ||
    !Number.isInteger(s.user?.uid) ||
    !Number.isInteger(s.user?.gid) ||
    !s.limits ||
    !isString(s.flavor) ||
    !isArgv(s.readOnlyPaths)
  )
    return undefined;
  const w = v.worker as Partial<WorkerSpec> | undefined;
  if (w !== undefined && (!isString(w.name) || !isArgv(w.command) || !isString(w.restart) || typeof w.restartDelayMs !== 'number'))
    return undefined;
  return v as AdoptionSpec;
}

function readHolder(text: string): SlotHolder | undefined {
  const v = parse(text) as Partial<SlotHolder> | undefined;
  if (!v || !isString(v.instanceId) || !Number.isInteger(v.instanceNumber) || !isStringRecord(v.vars)) return undefined;
  return { instanceId: v.instanceId, instanceNumber: v.instanceNumber!, vars: v.vars };
}

/**
 * A service of `owner` that a later daemon can adopt, or undefined when it cannot be (a one-off
 * command's job, a service made before services carried these labels, a label unreadable): such
 * a service is removed as a leftover.
 */
export function readFoundService(service: ListedService, owner: string): FoundService | undefined {
  const labels = service.Spec.Labels ?? {};
  const role = labels[LABEL_ROLE];
  if (labels[LABEL_OWNER] !== owner || (role !== 'instance' && role !== 'worker')) return undefined;
  const [appId, deploymentId, key, marker] = ['slipway.app', 'slipway.deployment', LABEL_KEY, LABEL_MARKER].map((n) => labels[n]);
  const spec = readSpec(labels[LABEL_SPEC]);
  const replicas = service.Spec.Mode?.Replicated?.Replicas;
  const container = service.Spec.TaskTemplate?.ContainerSpec;
  if (!appId || !deploymentId || !key || !marker || !spec || !Number.isInteger(replicas) || !isArgv(container?.Env) || !container.User)
    return undefined;
  if ((role === 'worker') !== (spec.worker !== undefined)) return undefined;
  const env: Record<string, string> = {};
  for (const pair of container.Env) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at) !== SLOT_VARIABLE) env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  const holders = new Map<number, SlotHolder>();
  for (const [name, value] of Object.entries(labels)) {
    if (!name.startsWith(LABEL_SLOT_PREFIX)) continue;
    const slot = Number(name.slice(LABEL_SLOT_PREFIX.length));
    const holder = readHolder(value);
    if (Number.isInteger(slot) && slot > 0 && holder) holders.set(slot, holder);
  }
  return {
    id: service.ID,
    name: service.Spec.Name,
    role,
    appId,
    deploymentId,
    key,
    marker,
    spec,
    env,
    user: container.User,
    replicas: replicas!,
    holders,
  };
}
