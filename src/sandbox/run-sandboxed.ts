import type { SandboxHost, SandboxStart } from './sandbox-host.js';
import type { RunResult } from '../executor/run-command.js';

export interface SandboxedRunResult extends RunResult {
  outOfMemory: boolean;
}

/**
 * Runs one command to completion in a sandbox of its own (a build step, a before-start
 * command): on timeout or abort the whole sandbox is killed, and nothing it started survives.
 */
export async function runSandboxed(
  host: SandboxHost,
  start: SandboxStart,
  o: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<SandboxedRunResult> {
  if (o.signal?.aborted) return { exitCode: null, signal: null, durationMs: 0, timedOut: false, aborted: true, outOfMemory: false };
  const started = performance.now();
  const sandbox = await host.start(start);
  let timedOut = false;
  let aborted = false;
  const onAbort = () => {
    aborted = true;
    void sandbox.signal('SIGKILL');
  };
  o.signal?.addEventListener('abort', onAbort, { once: true });
  const timer =
    o.timeoutMs !== undefined
      ? setTimeout(() => {
          timedOut = true;
          void sandbox.signal('SIGKILL');
        }, o.timeoutMs)
      : undefined;
  try {
    const exit = await sandbox.done;
    return { ...exit, durationMs: Math.round(performance.now() - started), timedOut, aborted };
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', onAbort);
  }
}
