import { type RunOptions, type RunResult, runCommand } from './run-command.js';

export interface CapturedRun extends RunResult {
  stdout: string;
  stderr: string;
}

/** Default bound of what is kept of each stream: a tool printing more is cut, not kept whole in memory. */
const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/**
 * Runs a short-lived command like runCommand (own process group killed at the end, timeout,
 * abort, no shell) and hands back what it printed, for commands whose output is their answer
 * (`npm view`, `git rev-parse`, `java -version`). Rejects only when the program could not start.
 */
export async function runCaptured(o: RunOptions & { maxOutputBytes?: number }): Promise<CapturedRun> {
  const max = o.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const kept = { out: [] as Buffer[], err: [] as Buffer[] };
  const size = { out: 0, err: 0 };
  const result = await runCommand({
    ...o,
    onData: (stream, chunk) => {
      o.onData?.(stream, chunk);
      if (size[stream] >= max) return;
      kept[stream].push(chunk.subarray(0, max - size[stream]));
      size[stream] += chunk.length;
    },
  });
  return { ...result, stdout: Buffer.concat(kept.out).toString('utf8'), stderr: Buffer.concat(kept.err).toString('utf8') };
}

/** The daemon's own environment, for tools that must see its configuration (npm's, git's); without unset names. */
export function daemonEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
  return { ...env, ...extra };
}

/** A command that failed: how it ended, and what it printed (for messages that say why). */
export class CommandFailedError extends Error {
  constructor(
    message: string,
    readonly result: CapturedRun,
  ) {
    super(message);
    this.name = 'CommandFailedError';
  }

  get stdout(): string {
    return this.result.stdout;
  }

  get stderr(): string {
    return this.result.stderr;
  }
}

/**
 * Runs a command that must succeed and returns what it printed; rejects with CommandFailedError
 * (its output kept) on a non-zero exit or a timeout, and with the start error when the program
 * cannot run. Without `env`, the command gets the daemon's environment.
 */
export async function runChecked(
  argv: string[],
  o: Partial<Omit<RunOptions, 'argv' | 'env'>> & { env?: Record<string, string | undefined>; maxOutputBytes?: number } = {},
): Promise<CapturedRun> {
  const env = o.env ? Object.fromEntries(Object.entries(o.env).filter((e): e is [string, string] => e[1] !== undefined)) : daemonEnv();
  const result = await runCaptured({ ...o, argv, cwd: o.cwd ?? process.cwd(), env });
  if (result.exitCode !== 0) {
    const how = result.timedOut
      ? 'was stopped after its time limit'
      : result.signal
        ? `was killed by ${result.signal}`
        : `exited with code ${result.exitCode}`;
    const said = result.stderr.trim() || result.stdout.trim();
    throw new CommandFailedError(`\`${argv.join(' ')}\` ${how}${said ? `: ${said.split('\n').slice(-5).join(' ')}` : ''}`, result);
  }
  return result;
}
