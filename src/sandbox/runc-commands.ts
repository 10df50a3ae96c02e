/**
 * argv arrays for every runc call, as pure functions tested as data. runc is Debian's OCI
 * runtime: it reads the config.json of oci-config.ts and makes the namespaces, mounts,
 * cgroup, seccomp filter and user switch the sandbox consists of.
 */

export const RUNC = '/usr/sbin/runc';
const CONTAINER_ID = /^[a-z][a-z0-9-]{0,62}$/;

export function checkContainerId(id: string): string {
  if (!CONTAINER_ID.test(id)) throw new Error(`Invalid sandbox id ${JSON.stringify(id)}.`);
  return id;
}

/**
 * Runs the sandbox in the foreground: runc stays its parent and forwards signals to it. The
 * former holder of every sandbox, kept for bench/start-command.ts to measure against conmon.
 */
export function runArgv(stateDir: string, bundle: string, id: string): string[] {
  return [RUNC, '--root', stateDir, 'run', '--no-new-keyring', '--bundle', bundle, checkContainerId(id)];
}

/** Starts the program of a sandbox `runc create` (run by conmon) made and holds waiting. */
export function startArgv(stateDir: string, id: string): string[] {
  return [RUNC, '--root', stateDir, 'start', checkContainerId(id)];
}

/** Sends a signal to the sandbox's init (tini forwards it to the app's process group). */
export function killArgv(stateDir: string, id: string, signal: string): string[] {
  return [RUNC, '--root', stateDir, 'kill', checkContainerId(id), signal];
}

export function deleteArgv(stateDir: string, id: string): string[] {
  return [RUNC, '--root', stateDir, 'delete', '--force', checkContainerId(id)];
}

export function listArgv(stateDir: string): string[] {
  return [RUNC, '--root', stateDir, 'list', '--quiet'];
}
