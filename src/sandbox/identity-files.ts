/**
 * The /etc/passwd and /etc/group a sandbox sees: the system's own accounts (uid and gid below
 * 1000, and nobody) and the app's own user and group, nothing of the other apps on the machine.
 * The host's /etc is shared read-only with every sandbox; these two files are bound over it.
 */

/** System accounts Debian makes (below 1000) and nobody/nogroup (65534). */
const isSystemId = (id: number) => id < 1000 || id === 65534;

function keep(text: string, own: number, also: readonly number[] = []): string {
  return text
    .split('\n')
    .filter((line) => {
      const id = Number(line.split(':')[2]);
      return line !== '' && Number.isInteger(id) && (isSystemId(id) || id === own || also.includes(id));
    })
    .map((line) => `${line}\n`)
    .join('');
}

/** The files for a sandbox running as `user` (holding `groups` besides its own: its FS buckets'), from the host's. */
export function sandboxIdentity(
  host: { passwd: string; group: string },
  user: { uid: number; gid: number },
  groups: readonly number[] = [],
): { passwd: string; group: string } {
  return { passwd: keep(host.passwd, user.uid), group: keep(host.group, user.gid, groups) };
}
