import { spawn } from 'node:child_process';

export interface ProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs argv (no shell) to completion and collects its output; never throws on a non-zero exit. */
export function runProcess(
  argv: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const [command, ...args] = argv;
    if (!command) throw new Error('runProcess needs a command');
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin.on('error', () => {}); // the process may exit without reading its input
    child.stdin.end(options.input);
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) =>
      resolve({
        code: code ?? (signal ? 128 : 1),
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
      }),
    );
  });
}

/** Runs argv and returns stdout, or throws an error quoting the command and what it printed. */
export async function runOrThrow(
  argv: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  const result = await runProcess(argv, options);
  if (result.code !== 0) {
    throw new Error(
      `\`${argv.join(' ')}\` exited with status ${result.code}: ${result.stderr.trim() || result.stdout.trim() || '(no output)'}`,
    );
  }
  return result.stdout;
}
