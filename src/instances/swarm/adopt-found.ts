/**
 * Adoption of the services an earlier daemon left running (their labels: adoption.ts), slot by
 * slot: the backend's own bookkeeping (which instance, which release service) is made anew for
 * each, so a restarted daemon follows the same tasks as if it had started them.
 */
import type { FoundInstance, InstanceCallbacks, InstanceSpec } from '../backend.js';
import type { FoundService } from './adoption.js';
import type { ReleaseService } from './release-service.js';
import { pick } from './service-inputs.js';
import type { SwarmInstance } from './swarm-instance.js';
import { meantToRun, type SwarmServices, type SwarmTask } from './swarm-services.js';
import { SwarmWorker } from './swarm-worker.js';
import { identityFile } from './task-entrypoint.js';

/** What adoption needs of the backend: its services, instances, and how it makes them. */
export interface AdoptionContext {
  services: SwarmServices;
  instances: ReadonlyMap<string, SwarmInstance>;
  newInstance(spec: InstanceSpec, release: ReleaseService): SwarmInstance;
  /** The found service followed again as a release service of the backend. */
  resumeService(found: FoundService): ReleaseService;
  log(line: string): void;
}

/**
 * Each slot whose label names an instance, and that has a task meant to run, is one. `claim`
 * says whether it serves its app's current release: then it is adopted as its task runs (its
 * lines and tasks followed from now on, its workers with it), otherwise it is stopped with its
 * workers. A slot nobody's label names (its instance never finished starting) is stopped, and
 * a service with no slot left is removed. Resolves with the instances adopted.
 */
export async function adoptFound(
  ctx: AdoptionContext,
  found: FoundService[],
  claim: (found: FoundInstance) => InstanceCallbacks | undefined,
): Promise<SwarmInstance[]> {
  const adopted: Array<{ instance: SwarmInstance; tasks: SwarmTask[] }> = [];
  const ending: Array<{ stop(graceMs: number): Promise<void> }> = [];
  const empty: ReleaseService[] = [];
  const slotsOf = async (release: ReleaseService, f: FoundService) => {
    const tasks = await release.tasks().catch(() => [] as SwarmTask[]);
    const wanted = (slot: number) => tasks.some((t) => t.Slot === slot && meantToRun(t));
    const slots = [...new Set(tasks.flatMap((t) => (t.Slot === undefined ? [] : [t.Slot])))].filter(wanted);
    return { tasks, slots, holder: (slot: number) => f.holders.get(slot) };
  };
  for (const f of found.filter((s) => s.role === 'instance')) {
    const release = ctx.resumeService(f);
    const { tasks, slots, holder } = await slotsOf(release, f);
    for (const slot of slots) {
      const h = holder(slot);
      const known = h !== undefined && !ctx.instances.has(h.instanceId);
      const callbacks = known ? claim({ appId: f.appId, deploymentId: f.deploymentId, ...pick(h) }) : undefined;
      const spec: InstanceSpec = {
        appId: f.appId,
        deploymentId: f.deploymentId,
        instanceId: known ? h.instanceId : `${f.name}.${slot}`,
        instanceNumber: known ? h.instanceNumber : slot - 1,
        releaseDir: f.spec.releaseDir,
        beforeStart: f.spec.beforeStart,
        command: f.spec.command,
        env: { ...f.env, ...(known ? h.vars : {}) },
        sandbox: f.spec.sandbox,
        onLog: () => undefined,
        ...callbacks,
      };
      const instance = ctx.newInstance(spec, release);
      release.hold(slot, instance, known ? identityFile(h.vars) : 'exit 0\n', known ? h : undefined);
      instance.slot = slot;
      const slotTasks = tasks.filter((t) => t.Slot === slot);
      if (callbacks) adopted.push({ instance, tasks: slotTasks });
      else ending.push(instance);
    }
    if (slots.length === 0) empty.push(release);
  }
  // Workers after instances: each joins the instance its slot's label names, or stops.
  for (const f of found.filter((s) => s.role === 'worker')) {
    const release = ctx.resumeService(f);
    const { tasks, slots, holder } = await slotsOf(release, f);
    for (const slot of slots) {
      const h = holder(slot);
      const instance = h && ctx.instances.get(h.instanceId);
      const worker = new SwarmWorker(ctx.services, f.spec.worker!, release, (stream, line) => {
        try {
          instance?.spec.onLog(stream, line);
        } catch {
          // A failing log sink must not take supervision down with it.
        }
      });
      release.hold(slot, worker, h ? identityFile(h.vars) : 'exit 0\n', h);
      worker.adopt(
        slot,
        tasks.filter((t) => t.Slot === slot),
      );
      if (instance) {
        instance.addWorker(worker);
        instance.spec.workers = [...(instance.spec.workers ?? []), f.spec.worker!];
      } else ending.push(worker);
    }
    if (slots.length === 0) empty.push(release);
  }
  const serving: SwarmInstance[] = [];
  for (const { instance, tasks } of adopted) {
    try {
      await instance.adopt(instance.slot!, tasks);
      serving.push(instance);
    } catch (error) {
      ctx.log(`could not adopt instance ${instance.id} (swarm service ${instance.serviceName}): ${(error as Error).message}`);
      ending.push(instance);
    }
  }
  if (found.length) ctx.log(`adopted ${serving.length} instance(s) from ${found.length} swarm service(s) of a previous run`);
  await Promise.all([
    ...ending.map((e) => e.stop(10_000).catch((error: Error) => ctx.log(`could not stop a leftover replica: ${error.message}`))),
    ...empty.map(async (release) => {
      ctx.log(`removing swarm service ${release.name}: none of its replicas runs`);
      await release.remove().catch((error: Error) => ctx.log(`could not remove swarm service ${release.name}: ${error.message}`));
    }),
  ]);
  return serving;
}
