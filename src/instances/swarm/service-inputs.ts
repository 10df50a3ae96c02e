/**
 * What the backend asks Swarm to run for an instance's release, a worker and a one-off command,
 * and the keys that decide which instances are replicas of one service. Kept apart from the
 * backend so its bookkeeping (which service is open, who holds which slot) reads on its own.
 */
import { createHash } from 'node:crypto';
import type { FoundInstance, InstanceSpec, OneOffSpec, WorkerSpec } from '../backend.js';
import { adoptionLabels, type SlotHolder } from './adoption.js';
import { ONE_OFF_HOLDER } from './one-off-task.js';
import type { ServiceSpecInput } from './service-spec.js';
import { IDENTITY_MOUNT, PER_INSTANCE_VARIABLES, SLOT_VARIABLE, perInstanceVariables, taskEntrypoint } from './task-entrypoint.js';

/** A service's name and its tasks' marker, chosen by the backend (serviceFor). */
export interface ServiceIdentity {
  name: string;
  marker: string;
  owner: string;
  network: string;
}

/** The service of a release: its instances are the replicas, each slot's identity written into its tasks. */
export function instanceServiceInput(
  s: ServiceIdentity,
  spec: InstanceSpec,
  image: string,
  key: string,
  restartDelayMs: number,
): ServiceSpecInput {
  return {
    ...replicaTaskInput(s, spec, image, spec.beforeStart, spec.command, restartDelayMs),
    role: 'instance',
    adoption: adoptionLabels(key, s.marker, adoptionSpec(spec)),
  };
}

/** The service of a release's worker: one replica beside each instance, restarted by its own policy. */
export function workerServiceInput(
  s: ServiceIdentity,
  spec: InstanceSpec,
  image: string,
  key: string,
  worker: WorkerSpec,
): ServiceSpecInput {
  return {
    ...replicaTaskInput(s, spec, image, [], worker.command, worker.restartDelayMs),
    role: 'worker',
    adoption: adoptionLabels(key, s.marker, { ...adoptionSpec(spec), worker }),
    restart: worker.restart,
  };
}

/**
 * What an instance's and a worker's tasks share: the release's image, the slot's identity
 * written in by the entrypoint, the app's user and folder.
 */
function replicaTaskInput(
  s: ServiceIdentity,
  spec: InstanceSpec,
  image: string,
  beforeStart: InstanceSpec['beforeStart'],
  command: string[],
  restartDelayMs: number,
): Omit<ServiceSpecInput, 'role'> {
  return {
    name: s.name,
    owner: s.owner,
    appId: spec.appId,
    deploymentId: spec.deploymentId,
    image,
    command: taskEntrypoint({ marker: s.marker, beforeStart, command, env: spec.env }),
    entrypoint: true,
    identityMount: IDENTITY_MOUNT,
    env: { ...sharedEnv(spec.env), [SLOT_VARIABLE]: '{{.Task.Slot}}' },
    workingDir: spec.releaseDir,
    sandbox: spec.sandbox,
    network: s.network,
    restartDelayMs,
    stopGraceMs: 10_000,
  };
}

/** A one-off command's job: a holder task the command runs beside as an exec (one-off-task.ts). */
export function oneOffServiceInput(s: Omit<ServiceIdentity, 'marker'>, spec: OneOffSpec, image: string): ServiceSpecInput {
  return {
    name: s.name,
    owner: s.owner,
    role: 'run',
    job: true,
    appId: spec.appId,
    deploymentId: spec.deploymentId,
    image,
    // The command runs beside the holder, as an exec with its standard input (one-off-task.ts).
    command: ONE_OFF_HOLDER,
    entrypoint: true,
    env: spec.env,
    workingDir: spec.releaseDir,
    sandbox: spec.sandbox,
    network: s.network,
    restartDelayMs: 0,
    stopGraceMs: 10_000,
  };
}

/** The environment the replicas of a service share: all but the instance's identity. */
export function sharedEnv(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !(PER_INSTANCE_VARIABLES as readonly string[]).includes(k)));
}

/** What a service's label keeps of the spec of its replicas (adoption.ts). */
function adoptionSpec(spec: InstanceSpec) {
  return { releaseDir: spec.releaseDir, command: spec.command, beforeStart: spec.beforeStart, sandbox: spec.sandbox };
}

export function holderOf(spec: InstanceSpec): SlotHolder {
  return { instanceId: spec.instanceId, instanceNumber: spec.instanceNumber, vars: perInstanceVariables(spec.env) };
}

export function pick(h: SlotHolder): Pick<FoundInstance, 'instanceId' | 'instanceNumber'> {
  return { instanceId: h.instanceId, instanceNumber: h.instanceNumber };
}

/** What the instances of one release share, digested: they are the replicas of one service. */
export function releaseKey(spec: InstanceSpec, image: string): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        spec.appId,
        spec.deploymentId,
        spec.releaseDir,
        image,
        spec.command,
        spec.beforeStart,
        sharedEnv(spec.env),
        spec.sandbox,
      ]),
    )
    .digest('hex');
}

/** What the workers of one process type of a release share: they are the replicas of one service. */
export function workerKey(spec: InstanceSpec, image: string, worker: WorkerSpec, index: number): string {
  return createHash('sha256')
    .update(JSON.stringify([releaseKey(spec, image), 'worker', index, worker]))
    .digest('hex');
}
