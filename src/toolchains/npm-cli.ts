/**
 * Runs the npm CLI that the daemon itself uses, so the registry, proxy and credentials come
 * from npm's own configuration (`npm config get registry`) and never from slipway's code.
 */
import { execFile } from 'node:child_process';

export interface NpmRunOptions {
  /** Working directory: a folder without a package.json, so no project .npmrc interferes. */
  cwd: string;
  timeoutMs?: number;
}

/** An npm command that failed: keeps npm's error code (E404, ETIMEDOUT...) when npm gave one. */
export class NpmCommandError extends Error {
  constructor(
    message: string,
    readonly argv: string[],
    readonly npmCode: string | undefined,
    readonly stderr: string,
  ) {
    super(message);
    this.name = 'NpmCommandError';
  }
}

/** Last lines of npm's stderr, without its warnings about unrelated configuration. */
function stderrTail(stderr: string): string {
  return stderr
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('npm warn'))
    .slice(-8)
    .join('\n');
}

/** Runs `npm <args>` and returns its stdout. */
export function runNpm(args: string[], options: NpmRunOptions): Promise<string> {
  const argv = ['npm', ...args];
  return new Promise((resolve, reject) => {
    execFile(
      'npm',
      args,
      {
        cwd: options.cwd,
        timeout: options.timeoutMs ?? 120_000,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' },
      },
      (error, stdout, stderr) => {
        if (!error) {
          resolve(stdout);
          return;
        }
        const code = /npm error code (\S+)/.exec(stderr)?.[1] ?? /"code":\s*"([^"]+)"/.exec(stdout)?.[1];
        const tail = stderrTail(stderr) || error.message;
        reject(new NpmCommandError(`\`${argv.join(' ')}\` failed${code ? ` (${code})` : ''}:\n${tail}`, argv, code, stderr));
      },
    );
  });
}
