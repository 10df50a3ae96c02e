import { daemonEnv, runCaptured } from '../executor/run-captured.js';

export interface ProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs argv (no shell) to completion and collects its output; never throws on a non-zero exit. */
export async function runProcess(
  argv: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<ProcessResult> {
  if (!argv[0]) throw new Error('runProcess needs a command');
  const env = options.env
    ? Object.fromEntries(Object.entries(options.env).filter((e): e is [string, string] => e[1] !== undefined))
    : daemonEnv();
  const result = await runCaptured({ argv: [...argv], cwd: options.cwd ?? process.cwd(), env, input: options.input ?? '' });
  return { code: result.exitCode ?? (result.signal ? 128 : 1), stdout: result.stdout, stderr: result.stderr };
}

/** Runs argv and returns stdout, or throws an error quoting the command and what it printed. */
export async function runOrThrow(argv: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  const result = await runProcess(argv, options);
  if (result.code !== 0) {
    throw new Error(
      `\`${argv.join(' ')}\` exited with status ${result.code}: ${result.stderr.trim() || result.stdout.trim() || '(no output)'}`,
    );
  }
  return result.stdout;
}
