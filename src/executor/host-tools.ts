import { access, constants } from 'node:fs/promises';

/** The programs that make and enter network namespaces (the instances', the builds', the add-ons' gateway). */
export interface HostTools {
  /** Absolute path of `ip` (iproute2). */
  ip: string;
  /** Absolute path of `setpriv` (util-linux). */
  setpriv: string;
}

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
