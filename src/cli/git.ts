import { runCaptured } from '../executor/run-captured.js';
import { CliError } from './errors.js';

export interface GitResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs git with argv (no shell) through the executor, in the user's terminal session so ssh can
 * ask for a key's passphrase; `onStderr` sees its progress output as it comes.
 */
export async function git(args: string[], cwd: string, env: NodeJS.ProcessEnv, onStderr?: (text: string) => void): Promise<GitResult> {
  const environment = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  try {
    const result = await runCaptured({
      argv: ['git', ...args],
      cwd,
      env: environment,
      keepTerminal: true,
      onData: (stream, chunk) => {
        if (stream === 'err') onStderr?.(chunk.toString());
      },
    });
    return { code: result.exitCode, stdout: result.stdout, stderr: result.stderr };
  } catch (error) {
    throw new CliError(`Cannot run git: ${(error as Error).message}.`, 'Install git.');
  }
}

export async function gitOrFail(args: string[], cwd: string, env: NodeJS.ProcessEnv, what: string, hint?: string): Promise<string> {
  const result = await git(args, cwd, env);
  if (result.code !== 0) throw new CliError(`${what}: ${result.stderr.trim() || `git exited with ${result.code}`}`, hint);
  return result.stdout.trim();
}
