/**
 * The processes of the data plane that the daemon starts and that outlive it (the sandboxes'
 * monitors, the router's supervisor, the add-on servers) move into a control group of their own
 * before they run their program, so that a service manager stopping the daemon's unit never
 * counts them as the daemon's (systemd tracks a unit by its cgroup: KillMode=control-group
 * would kill them with it). The move happens in the new process itself, before `exec`, so
 * whatever it starts afterwards is born in that group too. Nothing moves until the daemon says
 * where (`placeDataPlaneIn`): tests that start such processes on their own are left alone.
 */
let procsFiles: readonly string[] = [];

/** Sets the `cgroup.procs` files of the data plane's group (one per hierarchy that tracks processes). */
export function placeDataPlaneIn(files: readonly string[]): void {
  procsFiles = [...files];
}

/** Whether the daemon set a group (the processes then start through inDataPlaneGroup). */
export function dataPlaneGroupSet(): boolean {
  return procsFiles.length > 0;
}

/**
 * The argv that joins the data plane's group, then becomes `argv` (same pid). It must run as
 * root (the group's files are root's): a program meant to run as another user is given here as
 * `setpriv … -- program` (asUser), which drops the rights after the move. A failed write
 * (no such hierarchy any more) does not keep the program from starting.
 */
export function inDataPlaneGroup(
  argv: readonly string[],
  asUser?: { uid: number; gid: number },
  /** Groups of the process' own to join after the data plane's (an add-on server's limits). */
  ownProcsFiles: readonly string[] = [],
): string[] {
  const files = [...procsFiles, ...ownProcsFiles];
  if (files.length === 0) return [...argv];
  if (asUser) argv = ['setpriv', `--reuid=${asUser.uid}`, `--regid=${asUser.gid}`, '--clear-groups', '--', ...argv];
  const script = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ 2>/dev/null >"$1"; shift; n=$((n - 1)); done; exec "$@"';
  // On cgroup v2 a process is in one group: the last file written (its own) is where it stays.
  return ['/bin/sh', '-c', script, 'slipway-data-plane', String(files.length), ...files, ...argv];
}
