import { spawn } from 'node:child_process';
import { CliError } from './errors.js';

export interface GitResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs git with argv (no shell); `onStderr` sees its progress output as it comes. */
export function git(args: string[], cwd: string, env: NodeJS.ProcessEnv, onStderr?: (text: string) => void): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      onStderr?.(String(d));
    });
    child.on('error', (error) => reject(new CliError(`Cannot run git: ${error.message}.`, 'Install git.')));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export async function gitOrFail(args: string[], cwd: string, env: NodeJS.ProcessEnv, what: string, hint?: string): Promise<string> {
  const result = await git(args, cwd, env);
  if (result.code !== 0) throw new CliError(`${what}: ${result.stderr.trim() || `git exited with ${result.code}`}`, hint);
  return result.stdout.trim();
}
