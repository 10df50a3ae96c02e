/**
 * The argv that starts conmon (Debian's package of podman's container monitor) for a sandbox,
 * as a pure function tested as data. conmon runs `runc create`, then stays the sandbox's parent
 * on the host, a small C process (about 2 MiB RSS, 1 MiB of it shared) where `runc run` in the
 * foreground held about 10 MiB: it reaps the sandbox's init and writes its exit status to a
 * file when it ends. With the `passthrough` log driver it hands the sandbox the standard input,
 * output and error it was given, so the daemon reads the app's output from its own pipes.
 */
import { RUNC, checkContainerId } from './runc-commands.js';

export const CONMON = '/usr/bin/conmon';

/**
 * `--sync`: the process the daemon starts is the monitor (no fork into the background), so it
 * is the daemon's child for the sandbox's whole life and ends when the sandbox does.
 * `--api-version 1` with `_OCI_SYNCPIPE=3` in its environment: it reports `{"data": <pid>}` on
 * fd 3 once the sandbox is created, and closes it without a pid when `runc create` failed (runc's
 * error is then on the sandbox's standard error). The exit status is written to `<bundle>/exit/<id>`
 * (128 + n for a signal n, as `runc run` reported it); the sandbox's pid file, and any control
 * fifo or attach socket conmon would make, live in the bundle, which is removed with the
 * sandbox. (`--conmon-pidfile` is not given: conmon writes none with `--sync`; the daemon holds
 * its pid, and after a crash the sweep finds it by its bundle.) Standard input goes to the
 * sandbox as it is, like its output (no `--stdin` copy through conmon).
 */
export function conmonArgv(o: { stateDir: string; bundle: string; id: string; outputFile?: string }): string[] {
  const id = checkContainerId(o.id);
  return [
    CONMON,
    '--sync',
    '--api-version',
    '1',
    '--cid',
    id,
    '--cuuid',
    id,
    '--name',
    id,
    '--runtime',
    RUNC,
    '--runtime-arg',
    '--root',
    '--runtime-arg',
    o.stateDir,
    '--bundle',
    o.bundle,
    '--container-pidfile',
    `${o.bundle}/pid`,
    '--exit-dir',
    exitDir(o.bundle),
    '--socket-dir-path',
    o.bundle,
    // A sandbox that outlives the daemon writes its output to a file conmon keeps (output-file.ts),
    // replaced by a new one past OUTPUT_FILE_MAX_BYTES; others hand it to the daemon directly.
    ...(o.outputFile === undefined
      ? ['--log-path', 'passthrough:']
      : ['--log-path', `k8s-file:${o.outputFile}`, '--log-size-max', String(OUTPUT_FILE_MAX_BYTES)]),
    '--no-new-keyring',
  ];
}

/** The daemon copies each line into the app's own rotated log: the monitor's file only bridges its absences. */
export const OUTPUT_FILE_MAX_BYTES = 4 * 1024 * 1024;

/** Where conmon writes the exit status, as a file named after the sandbox (made before it starts). */
export function exitDir(bundle: string): string {
  return `${bundle}/exit`;
}

/** The environment variable naming conmon's report descriptor (fd 3 of the spawned process). */
export const CONMON_SYNC_PIPE_ENV = { _OCI_SYNCPIPE: '3' };
