import type { OneOffSpec } from '../backend.js';
import type { Sandbox, SandboxExit } from '../../sandbox/sandbox-host.js';
import { LogFrameReader } from './log-frames.js';
import { TERMINAL_STATES, type SwarmServices, type SwarmTask } from './swarm-services.js';

const POLL_MS = 200;
/** The command's last output may reach the log stream a moment after its task ended. */
const OUTPUT_SETTLE_MS = 500;

export interface OneOffTaskHost {
  services: SwarmServices;
  network: string;
  /** Told the task's address while it runs (add-on access), and when it is gone. */
  attached(address: string): Promise<void>;
  detached(address: string): Promise<void>;
}

/**
 * `slipway run` on a swarm: the command runs as a Swarm job of the release's image, with the
 * app's environment, user and limits, on the tasks' network (the router and the linked
 * add-ons). Its output is streamed from the job's logs as it comes, and its end is the task's.
 * A job's task has no standard input that can be reached before it runs: input is not passed.
 */
export async function startOneOffTask(host: OneOffTaskHost, serviceId: string, spec: OneOffSpec): Promise<Sandbox> {
  const startedAt = Date.now();
  const logs = await host.services.api.stream({
    path: `/services/${serviceId}/logs`,
    query: { follow: true, stdout: true, stderr: true },
    what: 'follow the output of a one-off command',
  });
  const reader = new LogFrameReader(
    () => undefined,
    (stream, chunk) => spec.onData(stream, chunk),
  );
  logs.on('data', (chunk: Buffer) => reader.push(chunk));
  logs.on('error', () => undefined);
  let task: SwarmTask | undefined;
  let address: string | undefined;
  let ended = false;
  let killedBy: string | null = null;
  const done = (async (): Promise<SandboxExit> => {
    try {
      for (;;) {
        const tasks = await host.services.tasks(serviceId);
        task = tasks.at(-1) ?? task;
        const containerId = task?.Status.ContainerStatus?.ContainerID;
        if (!address && task?.Status.State === 'running' && containerId) {
          address = await host.services.containerAddress(containerId, host.network).catch(() => undefined);
          if (address) await host.attached(address).catch(() => undefined);
        }
        if (task && TERMINAL_STATES.has(task.Status.State)) break;
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
      await new Promise((r) => setTimeout(r, OUTPUT_SETTLE_MS));
      const code = task?.Status.ContainerStatus?.ExitCode;
      if (code === undefined) {
        spec.onData(
          'err',
          Buffer.from(
            `The one-off command's task ended without running (${task?.Status.State ?? 'unknown'}: ${task?.Status.Err ?? task?.Status.Message ?? ''}).\n`,
          ),
        );
        return { exitCode: null, signal: killedBy, outOfMemory: false };
      }
      const bySignal = code > 128 && code < 160;
      return { exitCode: bySignal ? null : code, signal: bySignal ? (killedBy ?? signalName(code - 128)) : null, outOfMemory: false };
    } finally {
      ended = true;
      logs.destroy();
      if (address) await host.detached(address).catch(() => undefined);
      await host.services.remove(serviceId).catch(() => undefined);
    }
  })();
  return {
    id: serviceId,
    pid: 0,
    startedAt,
    done,
    exited: () => ended,
    memoryUsage: () => undefined,
    signal: async (signal) => {
      const containerId = task?.Status.ContainerStatus?.ContainerID;
      killedBy = signal;
      if (containerId) await host.services.kill(containerId, signal === 'SIGKILL' ? 'SIGKILL' : 'SIGTERM').catch(() => undefined);
      // Not running yet: the job goes with its service.
      else await host.services.remove(serviceId).catch(() => undefined);
    },
  };
}

function signalName(n: number): string {
  return ({ 1: 'SIGHUP', 2: 'SIGINT', 9: 'SIGKILL', 15: 'SIGTERM' } as Record<number, string>)[n] ?? `signal ${n}`;
}
