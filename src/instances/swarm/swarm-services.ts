import type http from 'node:http';
import { DockerApiError, type DockerApi } from './docker-api.js';
import { LogFrameReader } from './log-frames.js';
import { NodeApis } from './node-apis.js';

export interface SwarmTask {
  ID: string;
  Slot?: number;
  CreatedAt: string;
  DesiredState: string;
  NodeID?: string;
  Status: { State: string; Message?: string; Err?: string; ContainerStatus?: { ContainerID?: string; ExitCode?: number } };
}

/** Task states after which the task's container has ended. */
export const TERMINAL_STATES = new Set(['complete', 'failed', 'shutdown', 'rejected', 'orphaned', 'remove']);

/**
 * A task Swarm means to run: not ended, and neither being shut down nor removed. A task Swarm
 * restarts after a crash waits out the restart delay as `ready` before it is `running`.
 */
export function meantToRun(task: SwarmTask): boolean {
  return !TERMINAL_STATES.has(task.Status.State) && task.DesiredState !== 'shutdown' && task.DesiredState !== 'remove';
}

/** The part of a replicated service's spec slipway changes; the rest is sent back as Docker gave it. */
export interface ReplicatedServiceSpec {
  Mode: { Replicated: { Replicas: number } };
  Labels?: Record<string, string>;
  [field: string]: unknown;
}

/** The calls of the Engine API the swarm backend makes about one service. */
export class SwarmServices {
  /** Where each task's container is reached: the API of the node it runs on. */
  readonly nodes: NodeApis;

  constructor(
    readonly api: DockerApi,
    /**
     * The registry's credential (`X-Registry-Auth`): given at each creation and update, Swarm
     * keeps it in the service and hands it to whichever node runs a task, which then pulls the
     * image with it (as `docker service create --with-registry-auth`).
     */
    private readonly registryAuth?: string,
  ) {
    this.nodes = new NodeApis(api);
  }

  private get authHeaders(): Record<string, string> | undefined {
    return this.registryAuth ? { 'X-Registry-Auth': this.registryAuth } : undefined;
  }

  async create(spec: Record<string, unknown>): Promise<string> {
    const answer = await this.api.json<{ ID: string }>({
      method: 'POST',
      path: '/services/create',
      body: spec,
      headers: this.authHeaders,
      what: `create service ${String(spec.Name)}`,
    });
    return answer.ID;
  }

  async tasks(serviceId: string): Promise<SwarmTask[]> {
    const tasks = await this.api.json<SwarmTask[]>({
      path: '/tasks',
      query: { filters: JSON.stringify({ service: [serviceId] }) },
      what: 'list the tasks of a service',
    });
    return tasks.sort((a, b) => a.CreatedAt.localeCompare(b.CreatedAt));
  }

  /** Rewrites part of a service's spec (Docker wants the whole spec and its current version). */
  async update(serviceId: string, change: (spec: ReplicatedServiceSpec) => void): Promise<void> {
    try {
      await this.updateOnce(serviceId, change);
    } catch {
      // "update out of sequence": the service changed between reading and writing; once more.
      await this.updateOnce(serviceId, change);
    }
  }

  private async updateOnce(serviceId: string, change: (spec: ReplicatedServiceSpec) => void): Promise<void> {
    const current = await this.api.json<{ Version: { Index: number }; Spec: ReplicatedServiceSpec }>({
      path: `/services/${serviceId}`,
      what: 'inspect a service',
    });
    change(current.Spec);
    await this.api.json({
      method: 'POST',
      path: `/services/${serviceId}/update`,
      query: { version: current.Version.Index },
      body: current.Spec,
      headers: this.authHeaders,
      what: 'update a service',
    });
  }

  /**
   * Removes the task containers of services whose names start with `prefix` (this daemon's):
   * a container can outlive its service, as a job's does when the job is removed while its
   * task runs, and it would hold the tasks' network and its addresses. The containers of the
   * services named in `keep` (running ones, to adopt) are left alone.
   */
  async removeContainersOf(prefix: string, api = this.api, keep: ReadonlySet<string> = new Set()): Promise<string[]> {
    const containers = await api.json<Array<{ Id: string; Labels?: Record<string, string> }>>({
      path: '/containers/json',
      query: { all: 'true', filters: JSON.stringify({ label: ['com.docker.swarm.service.name'] }) },
      what: 'list the task containers',
    });
    const removed: string[] = [];
    for (const container of containers) {
      const service = container.Labels?.['com.docker.swarm.service.name'] ?? '';
      if (!service.startsWith(prefix) || keep.has(service)) continue;
      try {
        await api.json({
          method: 'DELETE',
          path: `/containers/${container.Id}`,
          query: { force: 'true' },
          what: 'remove a task container',
        });
        removed.push(service);
      } catch (e) {
        // Gone already, or Docker is removing it right now (its service was just removed).
        const goingAnyway =
          e instanceof DockerApiError && (e.status === 404 || (e.status === 409 && /already in progress/.test(e.message)));
        if (!goingAnyway) throw e;
      }
    }
    return removed;
  }

  async remove(serviceId: string): Promise<void> {
    try {
      await this.api.json({ method: 'DELETE', path: `/services/${serviceId}`, what: 'remove a service' });
    } catch (e) {
      if (!(e instanceof DockerApiError && e.status === 404)) throw e;
    }
  }

  /** Services carrying every label given (`key=value`). */
  async withLabels(labels: string[]): Promise<Array<{ ID: string; Spec: { Name: string; Labels?: Record<string, string> } }>> {
    return this.api.json({ path: '/services', query: { filters: JSON.stringify({ label: labels }) }, what: 'list services' });
  }

  /**
   * Follows the output of every task of a service, line by line, until `close` is called or the
   * service is gone. Docker keeps the lines of ended tasks: a crash's last words are there too.
   */
  async followLogs(
    serviceId: string,
    onLine: (stream: 'out' | 'err', line: string) => void,
  ): Promise<{ close(): void; ended: Promise<void> }> {
    const res: http.IncomingMessage = await this.api.stream({
      path: `/services/${serviceId}/logs`,
      query: { follow: true, stdout: true, stderr: true },
      what: 'follow the logs of a service',
    });
    const reader = new LogFrameReader(onLine);
    const ended = new Promise<void>((resolve) => {
      res.on('data', (chunk: Buffer) => reader.push(chunk));
      res.on('end', () => {
        reader.end();
        resolve();
      });
      res.on('error', () => resolve());
      res.on('close', () => resolve());
    });
    return { close: () => res.destroy(), ended };
  }

  /** The address of a task's container on a network, asked from the node the task runs on. */
  async containerAddress(task: SwarmTask, network: string): Promise<string | undefined> {
    const c = await (await this.nodes.of(task.NodeID)).json<{ NetworkSettings?: { Networks?: Record<string, { IPAddress?: string }> } }>({
      path: `/containers/${containerOf(task)}/json`,
      what: 'inspect a container',
    });
    const address = c.NetworkSettings?.Networks?.[network]?.IPAddress;
    return address || undefined;
  }

  /** A signal to a task's container, through the API of the node it runs on. */
  async kill(task: SwarmTask, signal: 'SIGTERM' | 'SIGINT' | 'SIGHUP' | 'SIGKILL'): Promise<void> {
    await (await this.nodes.of(task.NodeID)).json({
      method: 'POST',
      path: `/containers/${containerOf(task)}/kill`,
      query: { signal },
      what: 'signal a container',
    });
  }

  /** Removes an ended task's container on its node (Swarm keeps a removed job's container). */
  async removeContainer(task: SwarmTask): Promise<void> {
    try {
      await (await this.nodes.of(task.NodeID)).json({
        method: 'DELETE',
        path: `/containers/${containerOf(task)}`,
        query: { force: 'true' },
        what: 'remove a task container',
      });
    } catch (e) {
      if (!(e instanceof DockerApiError && e.status === 404)) throw e;
    }
  }

  /** A task's memory use and CPU time so far, with when Docker read them, from one `stats` call. */
  async usage(task: SwarmTask): Promise<TaskUsage> {
    const s = await (await this.nodes.of(task.NodeID)).json<ContainerStats>({
      path: `/containers/${containerOf(task)}/stats`,
      query: { stream: false },
      what: 'read the memory and CPU of a container',
    });
    return taskUsage(s);
  }

  /**
   * Runs a short command of the daemon's in a task's container, detached, as `user`, and
   * resolves with its exit code (undefined when it did not end within the time).
   */
  async execQuietly(task: SwarmTask, argv: string[], user: string, timeoutMs = 10_000): Promise<number | undefined> {
    const api = await this.nodes.of(task.NodeID);
    const exec = await api.json<{ Id: string }>({
      method: 'POST',
      path: `/containers/${containerOf(task)}/exec`,
      body: { AttachStdin: false, AttachStdout: false, AttachStderr: false, Tty: false, Cmd: argv, User: user },
      what: 'create a command in a task',
    });
    await api.json({
      method: 'POST',
      path: `/exec/${exec.Id}/start`,
      body: { Detach: true, Tty: false },
      what: 'start a command in a task',
    });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const state = await api.json<{ Running: boolean; ExitCode: number | null }>({
        path: `/exec/${exec.Id}/json`,
        what: 'read the end of a command in a task',
      });
      if (!state.Running && state.ExitCode !== null) return state.ExitCode;
      if (Date.now() > deadline) return undefined;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

function containerOf(task: SwarmTask): string {
  const id = task.Status.ContainerStatus?.ContainerID;
  if (!id) throw new Error(`Swarm task ${task.ID} has no container yet.`);
  return id;
}

export function describeTaskEnd(task: SwarmTask): string {
  const code = task.Status.ContainerStatus?.ExitCode;
  if (code === 137) return 'was killed (SIGKILL, exit code 137)';
  if (code !== undefined && code > 128 && code < 160) return `was ended by signal ${code - 128} (exit code ${code})`;
  if (code !== undefined) return `exited with code ${code}`;
  return `ended (${task.Status.State}${task.Status.Err ? `: ${task.Status.Err}` : ''})`;
}

/** What `GET /containers/<id>/stats?stream=false` answers, as far as slipway reads it. */
export interface ContainerStats {
  read?: string;
  memory_stats?: { usage?: number };
  cpu_stats?: { cpu_usage?: { total_usage?: number } };
}

export interface TaskUsage {
  memory?: number;
  /** CPU time so far (seconds) and when Docker read it. */
  cpu?: { seconds: number; at: number };
}

/** The memory and CPU of a container's stats: total_usage is in nanoseconds, `read` its time. */
export function taskUsage(s: ContainerStats): TaskUsage {
  const ns = s.cpu_stats?.cpu_usage?.total_usage;
  const at = s.read ? Date.parse(s.read) : Number.NaN;
  return {
    ...(s.memory_stats?.usage === undefined ? {} : { memory: s.memory_stats.usage }),
    ...(ns === undefined || !Number.isFinite(at) ? {} : { cpu: { seconds: ns / 1e9, at } }),
  };
}
