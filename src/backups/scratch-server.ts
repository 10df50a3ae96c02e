import { rm } from 'node:fs/promises';

/**
 * The argv that runs `argv` with no network (its own empty namespace: unshare, which needs
 * root) as the server's account (setpriv drops to it after), for a throw-away server.
 */
export function isolatedAs(user: { uid: number; gid: number }, argv: string[]): string[] {
  return ['unshare', '--net', '--', 'setpriv', `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--', ...argv];
}

/**
 * Ends a throw-away server (a restored PostgreSQL copy, a Redis loaded from a snapshot) and
 * removes its folder: `signal` to its process group, SIGKILL after 20 s, then the folder, so a
 * verification or a restore leaves nothing behind whatever happened.
 */
export async function endScratchServer(
  server: { pid: number } | undefined,
  exited: Promise<void> | undefined,
  signal: NodeJS.Signals,
  folder: string,
): Promise<void> {
  await stopScratchServer(server, exited, signal);
  await rm(folder, { recursive: true, force: true });
}

/** Ends a throw-away server as endScratchServer does, leaving its folder in place. */
export async function stopScratchServer(
  server: { pid: number } | undefined,
  exited: Promise<void> | undefined,
  signal: NodeJS.Signals,
): Promise<void> {
  if (server && exited) {
    signalGroup(server.pid, signal);
    let timer: NodeJS.Timeout | undefined;
    const stopped = await Promise.race([
      exited.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), 20_000);
      }),
    ]);
    clearTimeout(timer);
    if (!stopped) {
      signalGroup(server.pid, 'SIGKILL');
      await exited;
    }
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}
