import { PassThrough } from 'node:stream';
import type { OneOffSpec } from '../backend.js';
import type { Sandbox, SandboxExit } from '../../sandbox/sandbox-host.js';
import { LogFrameReader } from './log-frames.js';
import { TERMINAL_STATES, type SwarmServices, type SwarmTask } from './swarm-services.js';

const POLL_MS = 200;
/** How long the job's task may take to be scheduled, pull its image and run. */
const START_TIMEOUT_MS = 120_000;

/**
 * What the job's task runs under tini while the command runs beside it: it waits, and passes
 * the signals it is sent (tini forwards them to it) to every other process of the task, so a
 * SIGTERM to the task reaches the command as it reaches an instance.
 */
export const ONE_OFF_HOLDER = [
  '/bin/sh',
  '-c',
  'for s in TERM INT HUP; do trap "kill -s $s -1" "$s"; done; while :; do sleep 3600 & wait $!; done',
  'sh',
];

export interface OneOffTaskHost {
  services: SwarmServices;
  network: string;
  /** Told the task's address while it runs (add-on access), and when it is gone. */
  attached(address: string): Promise<void>;
  detached(address: string): Promise<void>;
}

/**
 * `slipway run` on a swarm: a Swarm job of the release's image (the app's environment, user and
 * limits, on the tasks' network: the router and the linked add-ons) holds a task, in which the
 * command runs as an exec whose connection Docker hands over: standard input flows to it as it
 * comes and its end closes the command's input, output flows back as it comes, and the exec's
 * exit code is the command's. The job goes when the command has ended.
 */
export async function startOneOffTask(host: OneOffTaskHost, serviceId: string, spec: OneOffSpec): Promise<Sandbox> {
  const startedAt = Date.now();
  const stdin = new PassThrough();
  let task: SwarmTask | undefined;
  let address: string | undefined;
  let ended = false;
  let killedBy: string | null = null;
  const done = (async (): Promise<SandboxExit> => {
    try {
      const running = await runningTask();
      if (!running) {
        spec.onData(
          'err',
          Buffer.from(
            `The one-off command's task ended without running (${task?.Status.State ?? 'unknown'}: ${task?.Status.Err ?? task?.Status.Message ?? ''}).\n`,
          ),
        );
        return { exitCode: null, signal: killedBy, outOfMemory: false };
      }
      address = await host.services.containerAddress(running, host.network).catch(() => undefined);
      if (address) await host.attached(address).catch(() => undefined);
      let code: number | undefined;
      try {
        code = await execute(running);
      } catch (e) {
        spec.onData('err', Buffer.from(`${(e as Error).message}\n`));
        return { exitCode: null, signal: killedBy, outOfMemory: false };
      }
      const bySignal = code === undefined || (code > 128 && code < 160);
      return {
        exitCode: bySignal || code === undefined ? null : code,
        signal: bySignal ? (killedBy ?? (code === undefined ? 'SIGKILL' : signalName(code - 128))) : null,
        outOfMemory: false,
      };
    } finally {
      ended = true;
      if (address) await host.detached(address).catch(() => undefined);
      // The holder waits for ever, and Swarm leaves a removed job's running container behind
      // (its task is already "complete" to the orchestrator): remove it on its node, which ends it first.
      if (task?.Status.ContainerStatus?.ContainerID) await host.services.removeContainer(task).catch(() => undefined);
      await host.services.remove(serviceId).catch(() => undefined);
    }
  })();

  /** The job's task once its container runs, or undefined when it ended first (or was stopped). */
  async function runningTask(): Promise<SwarmTask | undefined> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline && !killedBy) {
      task = (await host.services.tasks(serviceId)).at(-1) ?? task;
      if (task?.Status.State === 'running' && task.Status.ContainerStatus?.ContainerID) return task;
      if (task && TERMINAL_STATES.has(task.Status.State)) return undefined;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    return undefined;
  }

  /**
   * Runs the command in the task, input and output through the exec's connection, on the API of
   * the task's node; its exit code.
   */
  async function execute(running: SwarmTask): Promise<number | undefined> {
    const api = await host.services.nodes.of(running.NodeID);
    const containerId = running.Status.ContainerStatus!.ContainerID!;
    const exec = await api.json<{ Id: string }>({
      method: 'POST',
      path: `/containers/${containerId}/exec`,
      body: {
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        // Docker adds HOSTNAME to the environment; the command gets exactly the variables it was given.
        Cmd: ['/usr/bin/env', ...('HOSTNAME' in spec.env ? [] : ['-u', 'HOSTNAME']), '--', ...spec.command],
        User: `${spec.sandbox.user.uid}:${spec.sandbox.user.gid}`,
        WorkingDir: spec.releaseDir,
      },
      what: 'create the one-off command in its task',
    });
    const { socket, head } = await api.upgrade({
      path: `/exec/${exec.Id}/start`,
      body: { Detach: false, Tty: false },
      what: 'start the one-off command',
    });
    const reader = new LogFrameReader(
      () => undefined,
      (stream, chunk) => spec.onData(stream, chunk),
    );
    const closed = new Promise<void>((resolve) => {
      socket.on('data', (chunk: Buffer) => reader.push(chunk));
      socket.on('end', resolve);
      socket.on('close', resolve);
      socket.on('error', resolve);
    });
    if (head.length) reader.push(head);
    // The end of the input half-closes the connection: Docker closes the command's stdin.
    stdin.pipe(socket);
    await closed;
    stdin.unpipe(socket);
    socket.destroy();
    const inspected = await api.json<{ ExitCode: number | null; Running: boolean }>({
      path: `/exec/${exec.Id}/json`,
      what: 'read the exit code of the one-off command',
    });
    return inspected.Running || inspected.ExitCode === null ? undefined : inspected.ExitCode;
  }

  return {
    id: serviceId,
    pid: 0,
    startedAt,
    done,
    stdin,
    exited: () => ended,
    memoryUsage: () => undefined,
    cpuSeconds: () => undefined,
    // A one-off command ends with the daemon's session that follows it: nothing to let go of.
    detach: () => undefined,
    signal: async (signal) => {
      killedBy = signal;
      // The task's holder passes SIGTERM, SIGINT and SIGHUP on to the command; SIGKILL ends the task.
      if (task?.Status.ContainerStatus?.ContainerID) await host.services.kill(task, signal).catch(() => undefined);
      // Not running yet: the job goes with its service.
      else await host.services.remove(serviceId).catch(() => undefined);
    },
  };
}

function signalName(n: number): string {
  return ({ 1: 'SIGHUP', 2: 'SIGINT', 9: 'SIGKILL', 15: 'SIGTERM' } as Record<number, string>)[n] ?? `signal ${n}`;
}
