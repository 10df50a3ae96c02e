import type { LogStream } from '../backend.js';
import { DockerApiError } from './docker-api.js';
import { LogFrameReader } from './log-frames.js';
import { NodeApiUnknownError } from './node-apis.js';
import { TERMINAL_STATES, type SwarmServices, type SwarmTask } from './swarm-services.js';
import { IDENTITY_MOUNT, STARTED_SUFFIX, entrypointEvent, type EntrypointEvent } from './task-entrypoint.js';
import { withHolders, type FoundService, type SlotHolder } from './adoption.js';

const POLL_MS = 250;
/** How long a service's removal waits for Swarm to delete the tasks it scaled away. */
const REAP_WAIT_MS = 3000;
/** Lines of a slot that no instance holds yet (its task printed before the claim): kept this many. */
const EARLY_LINES = 500;

/** What a replica (a SwarmInstance) is told by the service it belongs to. */
export interface Replica {
  /** A line the task of its slot printed (marker lines taken out). */
  line(stream: LogStream, line: string, taskId: string): void;
  /** A marker line of the task's entrypoint. */
  event(event: EntrypointEvent, taskId: string): void;
  /** The tasks of its slot, oldest first, at each look. */
  observe(tasks: SwarmTask[]): Promise<void>;
}

/**
 * One Swarm service of N replicas for the instances of one release that share everything but
 * their identity. Each instance holds a slot (Swarm's replica number): starting an instance adds
 * a replica and claims the slot Swarm gives it, stopping one ends its task first and then takes a
 * replica away, so that Swarm (which removes stopped slots before running ones) removes that one.
 * The slot's identity file tells the task which instance it is: the daemon writes it into each
 * task of the slot as it runs, through the Docker API of the task's node, so tasks on any node
 * (and the ones Swarm restarts on its own) get it. Which instance holds each slot is also kept
 * in the service's labels (adoption.ts): a later daemon adopts the service from them.
 */
export class ReleaseService {
  serviceId: string | undefined;
  /** No instance may join any more: its last instance is stopping. */
  closing = false;

  private replicas = 0;
  /** Instances started and not stopping. */
  private active = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly claims = new Map<number, Replica>();
  /** Who holds each slot, as the service's labels say it for a later daemon. */
  private readonly slotHolders = new Map<number, SlotHolder>();
  /** What each slot's tasks are told: the identity of the instance holding it, or an end. */
  private readonly identities = new Map<number, string>();
  /** Tasks that have their identity, and tasks being given it. */
  private readonly told = new Set<string>();
  private readonly telling = new Set<string>();
  /** Why a slot's task could not be told its identity, when no retry can help. */
  private readonly problems = new Map<number, string>();
  private readonly taskSlots = new Map<string, number>();
  private readonly early = new Map<number, Array<[LogStream, string, string]>>();
  /** Lines waiting for the slot of their task to be looked up, and behind them, to keep order. */
  private lookups: Promise<unknown> = Promise.resolve();
  private waitingLines = 0;
  private logs: { close(): void } | undefined;
  private poller: NodeJS.Timeout | undefined;
  private looking: Promise<void> | undefined;
  /** Instances leaving their slots (see addReplica), and who waits until none is. */
  private leaving = 0;
  private noneLeft: Array<() => void> = [];

  constructor(
    private readonly services: SwarmServices,
    /** What the replicas share, digested: the backend's key for this release. */
    readonly key: string,
    readonly name: string,
    readonly marker: string,
    /** The app's uid:gid: who writes the identity into the task (its own tmpfs). */
    private readonly user: string,
    private readonly specFor: (replicas: number) => Record<string, unknown>,
  ) {}

  /**
   * Asks Swarm for one more replica and claims the slot it makes for `replica`, writing down in
   * the service's labels that `holder` holds it.
   */
  async addReplica(replica: Replica, identity: string, timeoutMs: number, holder: SlotHolder): Promise<number> {
    this.active++;
    // Swarm takes a replica away by removing a slot whose task does not run, and the one it has
    // just made for this instance is still starting: a scale-up right after a scale-down would
    // lose its new task in place of a leaving one. The leaving ones go first.
    await this.noneLeaving(timeoutMs);
    await this.serially(async () => {
      this.replicas++;
      if (this.serviceId === undefined) {
        this.serviceId = await this.services.create(this.specFor(this.replicas));
        this.logs = await this.followLogs(this.serviceId);
        this.poller = setInterval(() => void this.look().catch(() => undefined), POLL_MS);
      } else await this.setReplicas();
    });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const tasks = await this.services.tasks(this.serviceId!);
      this.learn(tasks);
      const free = tasks
        .filter(
          (t) =>
            t.Slot !== undefined &&
            !this.claims.has(t.Slot) &&
            !TERMINAL_STATES.has(t.Status.State) &&
            t.DesiredState !== 'shutdown' &&
            t.DesiredState !== 'remove',
        )
        .sort((a, b) => a.Slot! - b.Slot!)[0];
      if (free) {
        const slot = free.Slot!;
        this.claims.set(slot, replica);
        this.identities.set(slot, identity);
        this.slotHolders.set(slot, holder);
        void this.tellIdentities(tasks).catch(() => undefined);
        for (const [stream, line, taskId] of this.early.get(slot) ?? []) this.deliver(slot, stream, line, taskId);
        this.early.delete(slot);
        await this.serially(() => this.setReplicas());
        return slot;
      }
      if (Date.now() > deadline) throw new Error(`Swarm made no new task for the instance within ${Math.round(timeoutMs / 1000)} s.`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * Goes on with a service an earlier daemon made (adoption): its lines from now on, and a look
   * at its tasks as for one this daemon made. Its slots' holders are given with hold().
   */
  resume(found: FoundService): void {
    this.serviceId = found.id;
    this.replicas = found.replicas;
    this.poller = setInterval(() => void this.look().catch(() => undefined), POLL_MS);
    void this.followLogs(found.id, Date.now() / 1000)
      .then((logs) => {
        if (this.poller === undefined) logs.close();
        else this.logs = logs;
      })
      .catch(() => undefined);
  }

  /** An adopted slot's holder: it is told the slot's lines and tasks, as one that claimed it. */
  hold(slot: number, replica: Replica, identity: string, holder: SlotHolder | undefined): void {
    this.active++;
    this.claims.set(slot, replica);
    this.identities.set(slot, identity);
    if (holder) this.slotHolders.set(slot, holder);
  }

  /** The daemon lets go of the service, which goes on running: no more looks nor lines. */
  detach(): void {
    clearInterval(this.poller);
    this.poller = undefined;
    this.logs?.close();
    this.logs = undefined;
  }

  /**
   * Whether a running task's entrypoint has started the app (its before-start commands are
   * done): a file it writes beside its identity then. For a task running when the daemon came.
   */
  async hasStarted(task: SwarmTask, slot: number): Promise<boolean> {
    const file = `${IDENTITY_MOUNT}/${slot}${STARTED_SUFFIX}`;
    const code = await this.services.execQuietly(task, ['/bin/sh', '-c', 'test -e "$1"', 'sh', file], this.user).catch(() => undefined);
    return code === 0;
  }

  /** The tasks of the service now, oldest first. */
  async tasks(): Promise<SwarmTask[]> {
    if (this.serviceId === undefined) return [];
    const tasks = await this.services.tasks(this.serviceId);
    this.learn(tasks);
    return tasks;
  }

  /**
   * Takes away the replica of `slot`, whose task has ended (or is ending): Swarm removes the
   * slots that do not run first. The last one removes the service.
   */
  async removeReplica(slot: number): Promise<void> {
    await this.serially(async () => {
      this.replicas = Math.max(0, this.replicas - 1);
      this.slotHolders.delete(slot);
      if (this.serviceId !== undefined && !this.closing) await this.setReplicas();
    });
    this.release(slot);
  }

  /**
   * An instance stops: true when it was the last one running, and the service closes. Otherwise
   * it leaves its slot, and says left() once Swarm took the slot away (or its stop gave up).
   */
  leave(): boolean {
    this.active = Math.max(0, this.active - 1);
    if (this.active === 0) this.closing = true;
    else this.leaving++;
    return this.active === 0;
  }

  /** A stop that leave() did not call the last one is over: see addReplica. */
  left(): void {
    this.leaving = Math.max(0, this.leaving - 1);
    if (this.leaving === 0) for (const resolve of this.noneLeft.splice(0)) resolve();
  }

  /** Resolves once no instance is leaving its slot, or after `timeoutMs` whatever happens. */
  private async noneLeaving(timeoutMs: number): Promise<void> {
    if (this.leaving === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => this.noneLeft.push(resolve)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
    ]);
    clearTimeout(timer);
  }

  /** No replica wanted any more: Swarm ends every task (SIGTERM, as Swarm's scale-down does). */
  async scaleToNone(): Promise<void> {
    this.closing = true;
    await this.serially(async () => {
      this.replicas = 0;
      if (this.serviceId !== undefined) await this.setReplicas();
    });
  }

  /** Forgets a slot's holder (its task is gone) and its identity. */
  release(slot: number): void {
    this.claims.delete(slot);
    this.slotHolders.delete(slot);
    this.identities.delete(slot);
    this.problems.delete(slot);
  }

  /** Why the slot's task cannot get its identity (its node's API is unknown), if that is so. */
  problem(slot: number | undefined): string | undefined {
    return slot === undefined ? undefined : this.problems.get(slot);
  }

  /**
   * Forgets a slot's holder and tells any task Swarm still starts in it to end at once with
   * success (the slot's identity ends the script): should Swarm take another replica away
   * instead of this one, a policy restarting failures only leaves it ended.
   */
  retire(slot: number): void {
    this.claims.delete(slot);
    this.slotHolders.delete(slot);
    this.identities.set(slot, 'exit 0\n');
  }

  /** Instances still holding a slot. */
  holders(): number {
    return this.claims.size;
  }

  /** Removes the service. */
  async remove(): Promise<void> {
    this.closing = true;
    this.detach();
    if (this.serviceId !== undefined) {
      await this.reaped(this.serviceId);
      await this.services.remove(this.serviceId);
    }
  }

  /**
   * Waits (a moment at most) until Swarm has deleted the tasks it scaled away: their desired state
   * is "remove", and its task reaper deletes each one just after it ends. Docker 20.10's manager
   * dies on a nil task (SetServiceTasksRemove) when a service is removed while the reaper deletes
   * one of its tasks, which is when a stop that waited for its tasks to end removes the service.
   */
  private async reaped(serviceId: string): Promise<void> {
    const deadline = Date.now() + REAP_WAIT_MS;
    while (Date.now() < deadline) {
      const tasks = await this.services.tasks(serviceId).catch(() => []);
      if (!tasks.some((t) => t.DesiredState === 'remove')) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Writes the number of replicas and the slots' holders (labels: no task is restarted for them). */
  private async setReplicas(): Promise<void> {
    try {
      await this.services.update(this.serviceId!, (spec) => {
        spec.Mode.Replicated.Replicas = this.replicas;
        spec.Labels = withHolders(spec.Labels, this.slotHolders);
      });
    } catch (e) {
      // Gone already: removed by a stop of all its instances.
      if (!(e instanceof DockerApiError && e.status === 404)) throw e;
    }
  }

  /**
   * Gives each running task of a slot with an identity that identity, once: a file in the task's
   * own tmpfs, written whole then renamed (the task never reads half of it) by a command run in
   * the task as the app's user, through the API of the task's node. The arguments are argv, the
   * shell only runs its builtins and /bin/mv: nothing of the app's is interpreted.
   */
  private async tellIdentities(tasks: SwarmTask[]): Promise<void> {
    const waiting = tasks.filter(
      (t) =>
        t.Slot !== undefined &&
        this.identities.has(t.Slot) &&
        t.Status.State === 'running' &&
        t.Status.ContainerStatus?.ContainerID &&
        !this.told.has(t.ID) &&
        !this.telling.has(t.ID),
    );
    await Promise.all(
      waiting.map(async (t) => {
        this.telling.add(t.ID);
        try {
          const file = `${IDENTITY_MOUNT}/${t.Slot}`;
          const code = await this.services.execQuietly(
            t,
            [
              '/bin/sh',
              '-c',
              'umask 022 && printf %s "$1" > "$2.new" && /bin/mv -f "$2.new" "$2"',
              'sh',
              this.identities.get(t.Slot!)!,
              file,
            ],
            this.user,
          );
          if (code === 0) this.told.add(t.ID);
        } catch (e) {
          // Otherwise the task ended meanwhile, or its node did not answer: the next look tries again.
          if (e instanceof NodeApiUnknownError) this.problems.set(t.Slot!, e.message);
        } finally {
          this.telling.delete(t.ID);
        }
      }),
    );
  }

  private learn(tasks: SwarmTask[]): void {
    for (const t of tasks) if (t.Slot !== undefined) this.taskSlots.set(t.ID, t.Slot);
  }

  /** One look at the tasks for every replica (crashes, restarts, the running task's address). */
  private look(): Promise<void> {
    this.looking ??= (async () => {
      try {
        const tasks = await this.tasks();
        await this.tellIdentities(tasks);
        await Promise.all(
          [...this.claims].map(([slot, replica]) => replica.observe(tasks.filter((t) => t.Slot === slot)).catch(() => undefined)),
        );
      } finally {
        this.looking = undefined;
      }
    })();
    return this.looking;
  }

  /**
   * One stream of the service's lines, each carrying the task it came from (`details`): lines
   * go to the instance holding the task's slot, in order.
   */
  private async followLogs(serviceId: string, since?: number): Promise<{ close(): void }> {
    const res = await this.services.api.stream({
      path: `/services/${serviceId}/logs`,
      query: { follow: true, stdout: true, stderr: true, details: true, ...(since === undefined ? {} : { since: since.toFixed(3) }) },
      what: 'follow the logs of a service',
    });
    const reader = new LogFrameReader((stream, text) => {
      const m = /^(\S*com\.docker\.swarm\.task\.id=([a-z0-9]+)\S*) (.*)$/s.exec(text);
      if (!m) return;
      const taskId = m[2]!;
      const line = m[3]!;
      const slot = this.taskSlots.get(taskId);
      if (slot !== undefined && this.waitingLines === 0) return this.route(slot, stream, line, taskId);
      this.waitingLines++;
      this.lookups = this.lookups
        .then(() => this.slotOf(taskId))
        .then((s) => s !== undefined && this.route(s, stream, line, taskId))
        .finally(() => this.waitingLines--);
    });
    res.on('data', (chunk: Buffer) => reader.push(chunk));
    res.on('end', () => reader.end());
    res.on('error', () => undefined);
    return { close: () => res.destroy() };
  }

  private async slotOf(taskId: string): Promise<number | undefined> {
    const known = this.taskSlots.get(taskId);
    if (known !== undefined) return known;
    const task = await this.services.api.json<SwarmTask>({ path: `/tasks/${taskId}`, what: 'inspect a task' }).catch(() => undefined);
    if (task?.Slot !== undefined) this.taskSlots.set(taskId, task.Slot);
    return task?.Slot;
  }

  private route(slot: number, stream: LogStream, line: string, taskId: string): void {
    if (this.claims.has(slot)) return this.deliver(slot, stream, line, taskId);
    const early = this.early.get(slot) ?? [];
    if (early.length < EARLY_LINES) early.push([stream, line, taskId]);
    this.early.set(slot, early);
  }

  private deliver(slot: number, stream: LogStream, line: string, taskId: string): void {
    const replica = this.claims.get(slot);
    if (!replica) return;
    const event = stream === 'out' ? entrypointEvent(this.marker, line) : undefined;
    if (event) replica.event(event, taskId);
    else replica.line(stream, line, taskId);
  }
}
