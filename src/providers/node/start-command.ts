/**
 * The run phase (docs/behaviour.md: Node.js and Bun builds, rule 2; Project files, scripts): CC_RUN_COMMAND, else scripts.start
 * run by the package manager, else the `main` file run by the runtime.
 *
 * prestart / poststart: npm, pnpm, Yarn 1 and Bun run `prestart` before and `poststart` after
 * `start` themselves when asked to run `start` (verified with npm 11.6.1, pnpm 10.34.9,
 * Yarn 1.22.22, Bun 1.3.1), so each runs exactly once, in npm's order: poststart runs when the
 * start process exits with status 0 (for a server: when it ends on its own, cleanly). Yarn berry
 * runs neither, and a `main` file has no start script to hang them on, so slipway runs prestart
 * as a before-start command and poststart the same way npm does: the start command is
 * `bash -c '<start> && exec <poststart>'`, a fixed script (the main file is an argument, never
 * part of it). Under tini -g a signal reaches the whole process group, the app included.
 *
 * Signals: npm, pnpm and Yarn 1 run scripts with `sh -c`; Debian's sh (dash) does not exec the
 * last command, so a SIGTERM to the manager left the app running without the signal
 * (verified). With bash as the script shell, a single-command script replaces the shell and
 * receives SIGTERM (verified for all three), so the run commands set npm_config_script_shell.
 *
 * No resident package manager: `npm run start` stays beside the app for its whole life (about
 * 50 MB of npm's own JavaScript heap next to a 40 MB hello world), and so do pnpm, Yarn and
 * `bun run`. The instance instead runs scripts.start the way the manager would, without it: prestart
 * through the manager as a before-start command (it ends before the app starts), then the start
 * script itself with bash, `node_modules/.bin` first on PATH and npm's lifecycle variables set, as
 * the managers do; bash execs a single command, so the app is the sandbox's main process and
 * receives SIGTERM itself. With a poststart, bash waits for the start script and runs poststart
 * after a clean end (npm's order); bash is a few hundred KiB of its own, not a package manager.
 * Yarn berry with Plug'n'Play loads packages through .pnp.cjs, which `yarn run` puts in
 * NODE_OPTIONS (`--require <release>/.pnp.cjs`, and `--experimental-loader` for .pnp.loader.mjs
 * when the project has one; seen with Yarn 4.18.1): a start script that runs `node` gets the
 * same without Yarn. A start script that names a dependency's binary (`micro -l ...`) finds it
 * only through the shims `yarn run` writes, each of which runs `node <the binary's file>`: the
 * build asks `yarn bin <name>` (as the app's user, in the build sandbox) where that file is and
 * writes its path into the build folder (see pnp-binary.ts), and the instance runs
 * `exec node <that path> <the script's arguments>` with the same NODE_OPTIONS. A script that is
 * not one simple command (`a && b`, a pipe, a variable assignment first) may call several
 * binaries, so it still runs under `yarn run`.
 */
import { PlanError, type PlanCommand, type WrittenCommand } from '../plan.js';
import type { PackageManager } from './detect-package-manager.js';
import { PNP_BINARY_FILE, pnpBinaryOf, resolvePnpBinaryCommand } from './pnp-binary.js';

export interface StartInput {
  manager: PackageManager;
  /** Yarn berry's linker: with `pnp` the start script must run under Yarn. */
  berryLinker?: string;
  /** package.json name and version, given to the start script as npm does. */
  packageName?: string;
  packageVersion?: string;
  /** npm_config_user_agent as the manager would set it ("npm/11.6.1 node/v24.11.0"). */
  userAgent?: string;
  scripts: Record<string, string>;
  main?: string;
  /** CC_RUN_COMMAND. */
  runCommand?: string;
  /** Files that look like an entry point, for the hint when nothing is declared. */
  startCandidates: readonly string[];
}

export interface StartPlan {
  /** Build steps the start command needs (resolving a binary under Plug'n'Play), run after the install. */
  build: PlanCommand[];
  beforeStart: PlanCommand[];
  start: PlanCommand;
  notes: string[];
  warnings: string[];
}

/** Script shell for managers that would otherwise use sh (see the note above). */
export const SCRIPT_SHELL_ENV = { npm_config_script_shell: 'bash' };

/**
 * pnpm 12 checks node_modules before `pnpm run` and reinstalls when it looks stale; a release
 * folder always does (it was built elsewhere, its store is not there), so the instance would
 * try the registry from its network namespace, without the build's credentials, and never start
 * (seen with pnpm 12.21.0). The build already installed everything: the run phase must not.
 * pnpm 12 reads this setting from pnpm_config_*, not npm_config_*.
 */
export const PNPM_NO_INSTALL_BEFORE_RUN_ENV = { pnpm_config_verify_deps_before_run: 'false' };

/** argv that runs a package.json script with the app's package manager. */
export function runScriptArgv(manager: PackageManager, script: string): string[] {
  switch (manager) {
    case 'pnpm':
      return ['pnpm', 'run', script];
    case 'yarn1':
    case 'yarn-berry':
      return ['yarn', 'run', script];
    case 'bun':
      return ['bun', 'run', script];
    default:
      return ['npm', 'run', script];
  }
}

function scriptCommand(manager: PackageManager, script: string, label: string): PlanCommand {
  const command: PlanCommand = { label, argv: runScriptArgv(manager, script) };
  if (manager !== 'bun' && manager !== 'yarn-berry') command.env = { ...SCRIPT_SHELL_ENV };
  if (manager === 'pnpm') command.env = { ...command.env, ...PNPM_NO_INSTALL_BEFORE_RUN_ENV };
  return command;
}

/**
 * `start`, then the poststart script when it exits with status 0, as npm does. The script is
 * fixed text: `start`'s own words are the manager's argv (known words), and anything from
 * package.json (the main file) goes in as a positional argument, never into the script.
 */
function thenPoststart(manager: PackageManager, start: PlanCommand, label: string, args: string[]): PlanCommand {
  const poststart = scriptCommand(manager, 'poststart', 'poststart script');
  const first = args.length > 0 ? `${start.argv[0]} "$@"` : start.argv.join(' ');
  return {
    label,
    argv: ['bash', '-c', `${first} && exec ${poststart.argv.join(' ')}`, 'start', ...args],
    ...(poststart.env || start.env ? { env: { ...start.env, ...poststart.env } } : {}),
  };
}

/**
 * The start script run as its package manager would run it, without the manager staying
 * behind: bash with the release's `node_modules/.bin` first on PATH and npm's lifecycle
 * variables. The script and the package's name and version are positional arguments of a fixed
 * bash program, never part of it.
 */
const DIRECT_PRELUDE =
  'export PATH="$PWD/node_modules/.bin:$PATH" npm_lifecycle_event=start npm_lifecycle_script="$1" npm_package_name="$2" npm_package_version="$3" npm_config_user_agent="$4"; ';

/** What `yarn run` adds to NODE_OPTIONS under Plug'n'Play, when the release has its files. */
const PNP_PRELUDE =
  'if [ -f .pnp.cjs ]; then NODE_OPTIONS="--require $PWD/.pnp.cjs${NODE_OPTIONS:+ $NODE_OPTIONS}"; ' +
  'if [ -f .pnp.loader.mjs ]; then NODE_OPTIONS="$NODE_OPTIONS --experimental-loader file://$PWD/.pnp.loader.mjs"; fi; export NODE_OPTIONS; fi; ';

/** A start script that runs node itself: under Plug'n'Play, NODE_OPTIONS is all it needs. */
function startsNode(script: string): boolean {
  return /^node(\s|$)/.test(script.trim());
}

/**
 * The start script with its binary run by node from the path the build found (PNP_BINARY_FILE):
 * $5 is the script with its first word replaced by `exec node "$slipway_binary"`, the rest
 * (arguments, `$PORT`) left for bash as the manager would. When the build found no such binary
 * of the dependencies (a program on PATH), the file is empty and the script runs as written,
 * which is what `yarn run` does with it too. A relative path is the release's own.
 */
const PNP_BINARY_FOUND =
  `slipway_binary=; if [ -f ${PNP_BINARY_FILE} ]; then slipway_binary=$(<${PNP_BINARY_FILE}); fi; ` +
  'case $slipway_binary in ""|/*) ;; *) slipway_binary="$PWD/$slipway_binary";; esac; ';

function directStart(manager: PackageManager, input: StartInput, withPoststart: boolean, pnp: boolean, binaryRest?: string): PlanCommand {
  const args = ['start', input.scripts.start!, input.packageName ?? '', input.packageVersion ?? '', input.userAgent ?? ''];
  let prelude = DIRECT_PRELUDE + (pnp ? PNP_PRELUDE : '');
  let run = (exec: string) => `${exec}bash -c "$1"`;
  if (binaryRest !== undefined) {
    prelude += PNP_BINARY_FOUND;
    // The binary's path goes in as an argument of the inner bash, never into its program text.
    args.push(`slipway_binary=$1; shift; exec node "$slipway_binary"${binaryRest}`);
    run = (exec) => `if [ -n "$slipway_binary" ]; then ${exec}bash -c "$5" start "$slipway_binary"; else ${exec}bash -c "$1"; fi`;
  }
  if (!withPoststart) return { label: 'start script', argv: ['bash', '-c', `${prelude}${run('exec ')}`, ...args] };
  const poststart = scriptCommand(manager, 'poststart', 'poststart script');
  return {
    label: 'start script, then poststart',
    argv: ['bash', '-c', `${prelude}${run('')} && exec ${poststart.argv.join(' ')}`, ...args],
    ...(poststart.env ? { env: poststart.env } : {}),
  };
}

/** The start command as the user wrote it and where, for the printed plan (plan.ts, PlanCommand.written). */
function writtenStart(command: string, source: string, withPoststart: boolean): WrittenCommand {
  return { command, source: withPoststart ? `${source}, then scripts.poststart when it exits with status 0` : source };
}

const SCRIPTS_START = 'scripts.start in package.json';

/** `main` as a path argument: `./x` so a value starting with `-` can never be read as an option. */
function asPathArgument(file: string): string {
  return file.startsWith('/') || file.startsWith('./') || file.startsWith('../') ? file : `./${file}`;
}

export function startPlan(input: StartInput): StartPlan {
  const { manager, scripts } = input;
  const notes: string[] = [];
  const warnings: string[] = [];
  const runCommand = input.runCommand?.trim();

  if (runCommand) {
    notes.push(
      "Start command: CC_RUN_COMMAND, run with bash -c (the app owner's own command for the app's own sandbox; bash execs a single command so it receives SIGTERM). " +
        'prestart and poststart belong to scripts.start and are not run.',
    );
    const start: PlanCommand = {
      label: 'CC_RUN_COMMAND',
      argv: ['bash', '-c', runCommand],
      written: { command: runCommand, source: 'CC_RUN_COMMAND' },
    };
    return { build: [], beforeStart: [], start, notes, warnings };
  }

  const hasPre = scripts.prestart !== undefined;
  const hasPost = scripts.poststart !== undefined;

  if (scripts.start !== undefined) {
    const start = scriptCommand(manager, 'start', 'start script');
    const pnp = manager === 'yarn-berry' && input.berryLinker === 'pnp';
    const binary = pnp && !startsNode(scripts.start) ? pnpBinaryOf(scripts.start) : undefined;
    if (pnp && !startsNode(scripts.start) && !binary) {
      const beforeStart = hasPre ? [scriptCommand(manager, 'prestart', 'prestart script')] : [];
      const runs = [hasPre ? 'after prestart' : '', hasPost ? 'then poststart when it exits with status 0' : ''].filter(Boolean).join(', ');
      notes.push(
        `Start command: scripts.start through \`yarn run start\`${runs ? `, ${runs} (Yarn berry does not run pre/post scripts itself)` : ''}; it is not one command naming node or a binary, so it may need several of the binaries Yarn provides under Plug'n'Play.`,
      );
      return {
        build: [],
        beforeStart,
        start: {
          ...(hasPost ? thenPoststart(manager, start, 'start script, then poststart', []) : start),
          written: writtenStart(scripts.start, `${SCRIPTS_START}, run by \`yarn run start\``, hasPost),
        },
        notes,
        warnings,
      };
    }
    // The manager runs prestart and ends; the start script then runs without it (see above).
    const beforeStart = hasPre ? [scriptCommand(manager, 'prestart', 'prestart script')] : [];
    const runs = [hasPre ? 'after prestart' : '', hasPost ? 'then poststart when it exits with status 0' : ''].filter(Boolean).join(', ');
    notes.push(
      `Start command: scripts.start run by bash with node_modules/.bin on PATH, as \`${start.argv.join(' ')}\` would run it but without the package manager staying beside the app${runs ? `, ${runs}` : ''}.`,
    );
    if (pnp) notes.push("Plug'n'Play: NODE_OPTIONS loads .pnp.cjs, as yarn run would.");
    if (binary) {
      notes.push(
        `Plug'n'Play binary: \`yarn bin ${binary.name}\` finds its file after the install (written to ${PNP_BINARY_FILE}) and the instance runs it with node, as Yarn's shim would; a name that is not a binary of the dependencies runs from PATH.`,
      );
    }
    return {
      build: binary ? [resolvePnpBinaryCommand(binary.name)] : [],
      beforeStart,
      start: { ...directStart(manager, input, hasPost, pnp, binary?.rest), written: writtenStart(scripts.start, SCRIPTS_START, hasPost) },
      notes,
      warnings,
    };
  }

  if (input.main !== undefined && input.main.trim() !== '') {
    const runtime = manager === 'bun' ? 'bun' : 'node';
    const beforeStart = hasPre ? [scriptCommand(manager, 'prestart', 'prestart script')] : [];
    const runs = [hasPre ? 'after prestart' : '', hasPost ? 'then poststart when it exits with status 0' : ''].filter(Boolean).join(', ');
    notes.push(`Start command: no scripts.start, so the main file runs with ${runtime} (${input.main})${runs ? `, ${runs}` : ''}.`);
    const main: PlanCommand = { label: `${runtime} ${input.main}`, argv: [runtime, asPathArgument(input.main.trim())] };
    return {
      build: [],
      beforeStart,
      start: {
        ...(hasPost ? thenPoststart(manager, main, `${runtime} ${input.main}, then poststart`, main.argv.slice(1)) : main),
        written: writtenStart(`${runtime} ${input.main}`, 'main in package.json', hasPost),
      },
      notes,
      warnings,
    };
  }

  const found =
    input.startCandidates.length > 0
      ? ` The repository has ${input.startCandidates.join(', ')}: for example add "scripts": { "start": "node ${input.startCandidates[0]}" }.`
      : '';
  throw new PlanError(
    'No start command: package.json has no scripts.start and no main, and CC_RUN_COMMAND is not set. ' +
      'slipway looks for a start command in this order: CC_RUN_COMMAND, scripts.start in package.json, main in package.json.' +
      found,
    'Add "scripts": { "start": "node server.js" } (or "main") to package.json and push again, or set CC_RUN_COMMAND.',
  );
}
