import { daemonEnv, runCaptured } from '../../executor/run-captured.js';

export interface ToolRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a short-lived tool (mvn, java -version) to completion and captures its output.
 * Never throws for a non-zero exit: callers turn the output into an error that says
 * what was seen. A missing executable is reported as code 127, like a shell would.
 */
export async function runTool(
  argv: string[],
  options: { cwd?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<ToolRun> {
  const timeoutMs = options.timeoutMs ?? 10 * 60_000;
  const env = options.env
    ? Object.fromEntries(Object.entries(options.env).filter((e): e is [string, string] => e[1] !== undefined))
    : daemonEnv();
  let result: Awaited<ReturnType<typeof runCaptured>>;
  try {
    result = await runCaptured({ argv, cwd: options.cwd ?? process.cwd(), env, timeoutMs });
  } catch {
    return { code: 127, stdout: '', stderr: `${argv[0]}: command not found` };
  }
  const timedOut = result.timedOut ? `\n${argv[0]} was stopped after ${timeoutMs} ms` : '';
  return { code: result.exitCode ?? 1, stdout: result.stdout, stderr: result.stderr + timedOut };
}

/** The last lines of a tool's output, for error messages. */
export function tail(text: string, lines = 15): string {
  return text
    .split('\n')
    .map((l) => l.replace(/\x1b\[[0-9;]*m/g, '').trimEnd())
    .filter((l) => l !== '')
    .slice(-lines)
    .join('\n');
}
