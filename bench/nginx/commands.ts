/**
 * The nginx command lines slipway runs, built as argv arrays (never shell strings).
 */

export interface NginxCommandInput {
  nginxBinary: string;
  /** Absolute work directory; nginx's prefix, so relative paths inside nginx stay inside it. */
  workDir: string;
  configPath: string;
}

/**
 * Runs the master in the foreground; the executor's startAttachedServer runs it under
 * `setpriv --pdeathsig TERM`, so the kernel sends the master SIGTERM (fast shutdown, workers
 * included) if slipway dies without calling stop(), even by SIGKILL, and no orphaned router
 * keeps the port.
 */
export function nginxRunArgv(input: NginxCommandInput): string[] {
  return [input.nginxBinary, '-p', withSlash(input.workDir), '-c', input.configPath];
}

/** Validates a candidate configuration without touching the running master. */
export function nginxTestArgv(input: NginxCommandInput): string[] {
  return [input.nginxBinary, '-t', '-q', '-p', withSlash(input.workDir), '-c', input.configPath];
}

function withSlash(dir: string): string {
  return dir.endsWith('/') ? dir : `${dir}/`;
}
