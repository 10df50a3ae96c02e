import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { mkdirSync, openSync, writeSync, closeSync, readFileSync, unlinkSync } from 'node:fs';

/**
 * `--data-dir`, else $SLIPWAY_DATA_DIR, else a per-user default: /var/lib/slipway for root
 * (root's home is closed to the unprivileged app user, who must reach its release folders),
 * $XDG_DATA_HOME/slipway or ~/.local/share/slipway for anyone else.
 */
export function resolveDataDir(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  uid: number = process.getuid?.() ?? -1,
): string {
  if (flag) return resolve(flag);
  if (env.SLIPWAY_DATA_DIR) return resolve(env.SLIPWAY_DATA_DIR);
  if (uid === 0) return '/var/lib/slipway';
  const base = env.XDG_DATA_HOME || join(homedir(), '.local', 'share');
  return join(base, 'slipway');
}

export function ensureDataDir(dir: string): void {
  // 0711: the unprivileged app user must traverse it to reach its release folders.
  mkdirSync(dir, { recursive: true, mode: 0o711 });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * One daemon per data folder: a pid file created exclusively. A file left by a daemon
 * that died is taken over; a live one makes this start refuse with a clear message.
 */
export function acquireDaemonLock(dir: string): { release(): void } {
  const path = join(dir, 'daemon.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o644);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return {
        release() {
          try {
            if (readFileSync(path, 'utf8').trim() === String(process.pid)) unlinkSync(path);
          } catch {
            /* already gone */
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new Error(
          `Another slipway daemon (pid ${pid}) is already running on the data folder ${dir}.\n` +
            `Stop it first (kill ${pid}), or start this one with another --data-dir.`,
        );
      }
      unlinkSync(path);
    }
  }
  throw new Error(`Could not take the lock ${path}.`);
}
