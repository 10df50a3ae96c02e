import { execFile } from 'node:child_process';

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
export function runTool(
  argv: string[],
  options: { cwd?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<ToolRun> {
  const [file, ...args] = argv;
  return new Promise((resolve) => {
    execFile(
      file!,
      args,
      {
        cwd: options.cwd,
        env: options.env ?? process.env,
        timeout: options.timeoutMs ?? 10 * 60_000,
        maxBuffer: 64 * 1024 * 1024,
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        if (!error) return resolve({ code: 0, stdout, stderr });
        const err = error as NodeJS.ErrnoException & { code?: unknown; killed?: boolean };
        if (err.code === 'ENOENT') {
          return resolve({ code: 127, stdout, stderr: `${file}: command not found` });
        }
        const code = typeof err.code === 'number' ? err.code : 1;
        const timedOut = err.killed ? `\n${file} was stopped after ${options.timeoutMs ?? 600_000} ms` : '';
        resolve({ code, stdout, stderr: stderr + timedOut });
      },
    );
  });
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
