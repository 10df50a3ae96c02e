import { access, constants } from 'node:fs/promises';
import type { HostTools } from './netns-commands.js';

const SEARCH_DIRS = ['/usr/sbin', '/usr/bin', '/sbin', '/bin'];

async function find(program: string, debianPackage: string): Promise<string> {
  for (const dir of SEARCH_DIRS) {
    const candidate = `${dir}/${program}`;
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // try the next directory
    }
  }
  throw new Error(
    `The local instance backend needs "${program}" but found it in none of ${SEARCH_DIRS.join(', ')}. Install it with: apt-get install ${debianPackage}`,
  );
}

/**
 * Absolute paths of the host tools. Absolute because the instance's own PATH (which may not
 * include /usr/sbin) is in force when `ip netns exec` looks up the next program.
 */
export async function findHostTools(): Promise<HostTools> {
  const [ip, setpriv] = await Promise.all([find('ip', 'iproute2'), find('setpriv', 'util-linux')]);
  return { ip, setpriv };
}
