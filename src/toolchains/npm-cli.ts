/**
 * Runs the npm CLI that the daemon itself uses, so the registry, proxy and credentials come
 * from npm's own configuration (`npm config get registry`) and never from slipway's code.
 */
import { daemonEnv, runCaptured } from '../executor/run-captured.js';
import { describeExit } from '../executor/run-command.js';

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
export async function runNpm(args: string[], options: NpmRunOptions): Promise<string> {
  const argv = ['npm', ...args];
  const env = daemonEnv({ npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' });
  let result: Awaited<ReturnType<typeof runCaptured>>;
  try {
    result = await runCaptured({ argv, cwd: options.cwd, env, timeoutMs: options.timeoutMs ?? 120_000 });
  } catch (error) {
    throw new NpmCommandError(`\`${argv.join(' ')}\` failed:\n${(error as Error).message}`, argv, undefined, '');
  }
  if (result.exitCode === 0) return result.stdout;
  const { stdout, stderr } = result;
  const code = /npm error code (\S+)/.exec(stderr)?.[1] ?? /"code":\s*"([^"]+)"/.exec(stdout)?.[1];
  const tail = stderrTail(stderr) || `npm ${describeExit(result)}`;
  throw new NpmCommandError(`\`${argv.join(' ')}\` failed${code ? ` (${code})` : ''}:\n${tail}`, argv, code, stderr);
}
