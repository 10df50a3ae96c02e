/**
 * HAProxy's own program as the router runs it: its command line, the check of a configuration
 * before it is used, and what its runtime API says of the worker serving now.
 */
import { runEngineTool as run } from '../engine-process.js';
import { runtimeCommand, RuntimeApiError } from './runtime-api.js';

export function haproxyArgv(binary: string, config: string): string[] {
  // -dMglobal: HAProxy's process-wide pool cache, which Debian's build leaves off (it counts on
  // glibc's allocator). Buffers a thread's own cache cannot hold went back to malloc and free
  // at each request; with the global cache HAProxy spends about 0.8 µs less per small request.
  return [binary, '-W', '-db', '-dMglobal', '-f', config];
}

/** `haproxy -c`: throws saying why HAProxy is missing or what it refused. */
export async function checkConfiguration(binary: string, config: string): Promise<void> {
  const result = await run([binary, '-c', '-f', config]);
  if (result.missing)
    throw new Error(`HAProxy is not installed (tried "${binary}"). Install the Debian package haproxy (apt-get install -y haproxy).`);
  if (result.code !== 0)
    throw new Error(
      `HAProxy refused the router configuration: ${result.output
        .trim()
        .split('\n')
        .filter((l) => l.includes('ALERT'))
        .slice(0, 5)
        .join(' | ')}`,
    );
}

/** `show info` of the worker answering now, or '' when none answers within 2 s. */
export function workerInfo(adminSocket: string): Promise<string> {
  return runtimeCommand(adminSocket, 'show info', undefined, 2000).catch(() => '');
}

export async function workerPid(adminSocket: string): Promise<string | undefined> {
  return /^Pid: (\d+)/m.exec(await workerInfo(adminSocket))?.[1];
}

/** An error of reaching HAProxy (not of what it answered): no socket, nobody listening, the connection cut. */
export function isConnectionError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  if (code && ['ENOENT', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE'].includes(code)) return true;
  return error instanceof RuntimeApiError && /did not answer|: no answer$/.test(error.message);
}
