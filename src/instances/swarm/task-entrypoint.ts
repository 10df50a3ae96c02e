/**
 * What a replica's task runs under tini: a POSIX shell script, written by the backend (nothing
 * of the app's is interpreted by it), that
 *   1. waits for its slot's identity file (INSTANCE_ID, INSTANCE_NUMBER: the only variables that
 *      differ between the replicas of one service, whose spec is shared),
 *   2. runs the before-start commands, every time the task starts, so a task Swarm restarts on
 *      its own runs them again as the local backend does,
 *   3. replaces itself with the app's command, with exactly the app's environment, after writing
 *      a file beside its identity that says so (a later daemon adopting the task reads it).
 * It tells the backend how the start went with marker lines on stdout, which the backend takes
 * out of the app's log: `<marker> before-start <n>`, `<marker> before-start-failed <n> <code>`
 * and `<marker> started`.
 */
import { shellQuote } from '../../executor/shell-quote.js';

/** Where a task finds its slot's identity file (a read-only bind mount of the node's folder). */
export const IDENTITY_MOUNT = '/run/slipway-slot';
/** The variable holding the task's slot (a Swarm template); never reaches the app. */
export const SLOT_VARIABLE = 'SLIPWAY_SLOT';
/** What tells one replica from another: everything else of their environment is shared. */
export const PER_INSTANCE_VARIABLES = ['INSTANCE_ID', 'INSTANCE_NUMBER'] as const;
/** The file beside a slot's identity that says the task started the app (`<slot>.started`). */
export const STARTED_SUFFIX = '.started';
/** How long a task waits for its identity file, in tenths of a second. */
const IDENTITY_WAIT_TENTHS = 600;
/** The exit code of a task that never got its identity (the backend gave up on the slot). */
export const NO_IDENTITY_EXIT = 70;

export interface EntrypointInput {
  /** A random word per service: the app cannot guess it before it runs. */
  marker: string;
  beforeStart: string[][];
  command: string[];
  /** The app's environment, as the service gives it: what `env -u` must take back out. */
  env: Record<string, string>;
  /** Where the identity files are (tests run the script outside a task). */
  identityDir?: string;
}

/** The task's argv after tini: `/bin/sh -c <script> sh`. */
export function taskEntrypoint(i: EntrypointInput): string[] {
  if (!/^[a-z0-9-]{8,64}$/.test(i.marker)) throw new Error(`Invalid marker ${JSON.stringify(i.marker)}.`);
  // Docker adds HOSTNAME, the shell PWD; the app gets exactly the variables it was given.
  const unset = [SLOT_VARIABLE, ...['HOSTNAME', 'PWD'].filter((name) => !(name in i.env))].flatMap((name) => ['-u', name]);
  const run = (argv: string[]) => ['/usr/bin/env', ...unset, '--', ...argv].map(shellQuote).join(' ');
  const say = (words: string) => `printf '%s\\n' ${shellQuote(`${i.marker} `)}${words}`;
  const lines = [
    `identity=${shellQuote(i.identityDir ?? IDENTITY_MOUNT)}/"$${SLOT_VARIABLE}"`,
    'waited=0',
    'while [ ! -r "$identity" ]; do',
    `  waited=$((waited + 1)); [ "$waited" -gt ${IDENTITY_WAIT_TENTHS} ] && exit ${NO_IDENTITY_EXIT}`,
    '  sleep 0.1',
    'done',
    '. "$identity"',
    ...i.beforeStart.flatMap((argv, index) => [
      say(`'before-start ${index}'`),
      run(argv),
      `code=$?; if [ "$code" -ne 0 ]; then ${say(`"before-start-failed ${index} $code"`)}; exit "$code"; fi`,
    ]),
    `: > "$identity"${shellQuote(STARTED_SUFFIX)}`,
    say('started'),
    `exec ${run(i.command)}`,
  ];
  return ['/bin/sh', '-c', lines.join('\n'), 'sh'];
}

/** The identity file of one slot: shell assignments of the per-instance variables the app was given. */
export function identityFile(env: Record<string, string>): string {
  return Object.entries(perInstanceVariables(env))
    .map(([name, value]) => `export ${name}=${shellQuote(value)}\n`)
    .join('');
}

/** The per-instance variables the app was given, out of its environment. */
export function perInstanceVariables(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(PER_INSTANCE_VARIABLES.filter((name) => name in env).map((name) => [name, env[name]!]));
}

export type EntrypointEvent =
  | { kind: 'started' }
  | { kind: 'before-start'; index: number }
  | { kind: 'before-start-failed'; index: number; code: number };

/** The event a line of the task's stdout carries, or undefined for the app's own lines. */
export function entrypointEvent(marker: string, line: string): EntrypointEvent | undefined {
  if (!line.startsWith(`${marker} `)) return undefined;
  const rest = line.slice(marker.length + 1);
  if (rest === 'started') return { kind: 'started' };
  const hook = /^before-start (\d+)$/.exec(rest);
  if (hook) return { kind: 'before-start', index: Number(hook[1]) };
  const failed = /^before-start-failed (\d+) (\d+)$/.exec(rest);
  if (failed) return { kind: 'before-start-failed', index: Number(failed[1]), code: Number(failed[2]) };
  return undefined;
}
