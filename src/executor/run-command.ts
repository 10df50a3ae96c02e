import { spawnProcessGroup } from './process-group.js';

export interface RunOptions {
  /** Program and arguments, run directly: no shell ever interprets them. */
  argv: string[];
  cwd: string;
  /** Complete environment of the process (nothing is inherited from the daemon). */
  env: Record<string, string>;
  /** Run as this uid/gid with no supplementary groups (needs root). */
  user?: { uid: number; gid: number };
  /** Each line of output; `\n`, `\r\n` and `\r` end a line, a last unterminated line counts. */
  onLine?: (stream: 'out' | 'err', line: string) => void;
  /** Raw output as it comes (e.g. to keep it byte for byte). */
  onData?: (stream: 'out' | 'err', chunk: Buffer) => void;
  /** Text written to the standard input, which is then closed (no input otherwise). */
  input?: string;
  /** Stay in the caller's session and keep its terminal (see ProcessGroupOptions.keepTerminal). */
  keepTerminal?: boolean;
  /** Aborting kills the whole process group. */
  signal?: AbortSignal;
  /** After this many ms the whole process group is killed. */
  timeoutMs?: number;
}

export interface RunResult {
  /** Exit code, or null when the process was ended by a signal. */
  exitCode: number | null;
  /** Name of the signal that ended the process (e.g. `SIGKILL`), or null. */
  signal: string | null;
  durationMs: number;
  /** True when the process was killed because timeoutMs elapsed. */
  timedOut: boolean;
  /** True when the process was killed because the AbortSignal fired. */
  aborted: boolean;
}

/**
 * Runs one command to completion in its own process group and streams its output as lines.
 * When it ends (normally, on timeout or on abort) nothing it started in its group survives:
 * a build step must not leave a daemon holding files or ports behind.
 * Rejects only when the program could not be started; a non-zero exit is a result.
 */
export async function runCommand(o: RunOptions): Promise<RunResult> {
  if (o.signal?.aborted) {
    return { exitCode: null, signal: null, durationMs: 0, timedOut: false, aborted: true };
  }
  const started = performance.now();
  const group = await spawnProcessGroup(o);

  let timedOut = false;
  let aborted = false;
  const onAbort = () => {
    aborted = true;
    group.signalGroup('SIGKILL');
  };
  o.signal?.addEventListener('abort', onAbort, { once: true });
  const timer =
    o.timeoutMs !== undefined
      ? setTimeout(() => {
          timedOut = true;
          group.signalGroup('SIGKILL');
        }, o.timeoutMs)
      : undefined;

  try {
    const exit = await group.done;
    return {
      exitCode: exit.exitCode,
      signal: exit.signal,
      durationMs: Math.round(performance.now() - started),
      timedOut,
      aborted,
    };
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', onAbort);
  }
}

/** A one-line human description of how a command ended, for logs and error messages. */
export function describeExit(r: { exitCode: number | null; signal: string | null; timedOut?: boolean; aborted?: boolean }): string {
  if (r.timedOut) return 'killed after its time limit';
  if (r.aborted) return 'cancelled';
  if (r.signal) return `killed by signal ${r.signal}`;
  return `exited with code ${r.exitCode}`;
}
