import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { networkNames } from './options.js';

/** Under /run: gone at reboot, with the bridges and processes the locks speak of. */
export const DEFAULT_LOCK_DIR = '/run/slipway';

interface Owner {
  pid: number;
  dataDir: string;
}

/**
 * One daemon per instance subnet on a machine. The subnet names the bridge, the namespaces,
 * the cgroup root and the firewall table (networkNames): a second daemon on it would sweep the
 * first one's sandboxes at start and delete its bridge at stop, and every instance of the first
 * would lose its network. So the daemon takes the subnet first, before touching any of those,
 * and refuses with what to do when a live daemon holds it. A lock left by a daemon killed with
 * -9 names a dead pid and is taken over.
 */
export function acquireSubnetLock(subnet: string, dataDir: string, lockDir = DEFAULT_LOCK_DIR): { release(): void } {
  mkdirSync(lockDir, { recursive: true, mode: 0o755 });
  const path = lockPath(lockDir, subnet);
  for (let attempt = 0; attempt < 2; attempt++) {
    // Written aside and linked into place, so no one ever reads a lock without its owner.
    const draft = `${path}.${process.pid}`;
    writeFileSync(draft, JSON.stringify({ pid: process.pid, dataDir } satisfies Owner), { mode: 0o644 });
    try {
      linkSync(draft, path);
      unlinkSync(draft);
      return {
        release() {
          if (readOwner(path)?.pid === process.pid) unlinkSync(path);
        },
      };
    } catch (error) {
      unlinkSync(draft);
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = readOwner(path);
      if (owner && owner.pid !== process.pid && isAlive(owner.pid)) {
        throw new Error(subnetTakenMessage(subnet, owner, suggestSubnet(lockDir, subnet)));
      }
      unlinkSync(path);
    }
  }
  throw new Error(`Could not take the lock ${path} of the subnet ${subnet}.`);
}

export function subnetTakenMessage(subnet: string, owner: Owner, suggestion: string | undefined): string {
  const { bridgeName } = networkNames(subnet);
  return (
    `Another slipway daemon (pid ${owner.pid}, data folder ${owner.dataDir}) already runs its apps on the subnet ${subnet} (bridge ${bridgeName}).\n` +
    "Two daemons on one subnet would take down each other's bridge and instances. " +
    `Start this one on a subnet of its own with --subnet${suggestion ? ` (for example --subnet ${suggestion})` : ' 10.<n>.0.0/16'}, or stop the other daemon first.`
  );
}

/** The next 10.<n>.0.0/16 no live daemon holds and no interface is named after. */
function suggestSubnet(lockDir: string, taken: string): string | undefined {
  const first = Number(/^10\.(\d+)\./.exec(taken)?.[1] ?? 77);
  for (let step = 1; step < 256; step++) {
    const candidate = `10.${(first + step) % 256}.0.0/16`;
    const owner = readOwner(lockPath(lockDir, candidate));
    if (owner && isAlive(owner.pid)) continue;
    if (existsSync(`/sys/class/net/${networkNames(candidate).bridgeName}`)) continue;
    return candidate;
  }
  return undefined;
}

function lockPath(lockDir: string, subnet: string): string {
  return join(lockDir, `${networkNames(subnet).bridgeName}.owner`);
}

function readOwner(path: string): Owner | undefined {
  try {
    const owner = JSON.parse(readFileSync(path, 'utf8')) as Partial<Owner>;
    return Number.isInteger(owner.pid) && (owner.pid as number) > 0
      ? { pid: owner.pid as number, dataDir: String(owner.dataDir ?? '?') }
      : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
