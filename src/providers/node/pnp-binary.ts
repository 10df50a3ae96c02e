/**
 * Under Yarn's Plug'n'Play a dependency's binary is a file inside a zip of Yarn's cache, which
 * only the shims of `yarn run` find (each runs `node <that file>`). So that the start script can
 * run without Yarn staying beside the app, the build asks Yarn where the binary named by the
 * script is, once, after the install: `yarn bin <name>`, as the app's user in the build sandbox.
 * The answer is written into the build folder (it travels with the release), relative to the
 * folder since the release does not live where it was built; the start command reads it in the
 * instance's sandbox. Nothing here is read by the daemon.
 */
import type { PlanCommand } from '../plan.js';

/** Where the build writes the binary's path (relative to the build folder), empty when Yarn has none by that name. */
export const PNP_BINARY_FILE = '.slipway-cache/pnp-start-binary';

/**
 * Words that are not a dependency's binary: shell words, and programs a start script calls that
 * Yarn does not provide (the package managers themselves). Such scripts keep `yarn run`.
 */
const NOT_A_DEPENDENCY_BINARY = new Set([
  'node',
  'yarn',
  'npm',
  'npx',
  'pnpm',
  'pnpx',
  'bun',
  'bunx',
  'corepack',
  'sh',
  'bash',
  'exec',
  'env',
  'cd',
  'export',
  'time',
  'nice',
  'nohup',
  'command',
  'builtin',
  'source',
  'eval',
  'set',
  'unset',
  'if',
  'for',
  'while',
  'until',
  'case',
  'function',
  'test',
  'true',
  'false',
  'echo',
  'printf',
  'exit',
  'trap',
  'wait',
  'sleep',
]);

/** Anything that makes a script more than one simple command, where `exec` would drop the rest. */
const SHELL_CONTROL = /[;&|()`<>\r\n{}]/;

/**
 * The binary a start script runs and the rest of the script (its arguments, left for bash), when
 * the script is one simple command that starts with a plain name; undefined otherwise.
 */
export function pnpBinaryOf(script: string): { name: string; rest: string } | undefined {
  const trimmed = script.trim();
  if (SHELL_CONTROL.test(trimmed)) return undefined;
  const match = /^([A-Za-z0-9_@][A-Za-z0-9._@+-]*)(\s|$)/.exec(trimmed);
  if (!match || NOT_A_DEPENDENCY_BINARY.has(match[1]!)) return undefined;
  return { name: match[1]!, rest: trimmed.slice(match[1]!.length) };
}

/**
 * The build step: a fixed bash program, the binary's name its argument. A name Yarn does not
 * know (a program from PATH) leaves the file empty, and the script then runs as written, as it
 * would under `yarn run`.
 */
const RESOLVE =
  `rm -f ${PNP_BINARY_FILE} && mkdir -p .slipway-cache && : > ${PNP_BINARY_FILE} || exit; ` +
  'if found=$(yarn bin "$1" 2>/dev/null) && [ -n "$found" ]; then ' +
  `found=\${found##*$'\\n'}; case $found in "$PWD"/*) found=\${found#"$PWD"/};; esac; printf '%s\\n' "$found" > ${PNP_BINARY_FILE} || exit; ` +
  'echo "$1 is $found: the start command runs it with node."; ' +
  'else echo "$1 is not a binary of the dependencies: the start script runs it from PATH, as yarn run would."; fi';

export function resolvePnpBinaryCommand(name: string): PlanCommand {
  return { label: `yarn bin ${name} (the start script's binary under Plug'n'Play)`, argv: ['bash', '-c', RESOLVE, 'yarn-bin', name] };
}
