import { type RunResult, runCommand } from './run-command.js';

/**
 * The environment of the system's own tools the daemon runs as root (ip, nft, mount, useradd):
 * the system's folders only and the C locale, so nothing of the daemon's environment steers
 * which program runs, and their messages read the same on every machine.
 */
export const SYSTEM_TOOL_ENV: Record<string, string> = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' };

export interface SystemToolRun extends RunResult {
  /** Standard output, line by line. */
  out: string[];
  /** Standard error, line by line: what a failure's message quotes. */
  err: string[];
}

/** Runs a system tool from `/` with SYSTEM_TOOL_ENV; its lines are kept, its exit is the caller's to judge. */
export async function runSystemTool(argv: string[], timeoutMs = 30_000): Promise<SystemToolRun> {
  const out: string[] = [];
  const err: string[] = [];
  const result = await runCommand({
    argv,
    cwd: '/',
    env: SYSTEM_TOOL_ENV,
    timeoutMs,
    onLine: (stream, line) => (stream === 'out' ? out : err).push(line),
  });
  return { ...result, out, err };
}
