/**
 * The run phase (SPEC §4.4 rule 2, §2.3 scripts table): CC_RUN_COMMAND, else scripts.start
 * run by the package manager, else the `main` file run by the runtime.
 *
 * prestart / poststart: npm, pnpm, Yarn 1 and Bun run `prestart` before and `poststart` after
 * `start` themselves when asked to run `start` (verified with npm 11.6.1, pnpm 10.34.9,
 * Yarn 1.22.22, Bun 1.3.1), so each runs exactly once, in npm's order: poststart runs when the
 * start process exits with status 0 (for a server: after a clean shutdown). Yarn berry runs
 * neither, so slipway runs prestart as a before-start command and says poststart is not run.
 *
 * Signals: npm, pnpm and Yarn 1 run scripts with `sh -c`; Debian's sh (dash) does not exec the
 * last command, so a SIGTERM to the manager left the app running without the signal
 * (verified). With bash as the script shell, a single-command script replaces the shell and
 * receives SIGTERM (verified for all three), so the run commands set npm_config_script_shell.
 */
import { PlanError, type PlanCommand } from '../plan.js';
import type { PackageManager } from './detect-package-manager.js';

export interface StartInput {
  manager: PackageManager;
  scripts: Record<string, string>;
  main?: string;
  /** CC_RUN_COMMAND. */
  runCommand?: string;
  /** Files that look like an entry point, for the hint when nothing is declared. */
  startCandidates: readonly string[];
}

export interface StartPlan {
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
      'Start command: CC_RUN_COMMAND, run with bash -c (the app owner\'s own command for the app\'s own sandbox; bash execs a single command so it receives SIGTERM). ' +
        'prestart and poststart belong to scripts.start and are not run.',
    );
    return { beforeStart: [], start: { label: 'CC_RUN_COMMAND', argv: ['bash', '-c', runCommand] }, notes, warnings };
  }

  const hasPre = scripts.prestart !== undefined;
  const hasPost = scripts.poststart !== undefined;

  if (scripts.start !== undefined) {
    const start = scriptCommand(manager, 'start', 'start script');
    if (manager === 'yarn-berry') {
      const beforeStart = hasPre ? [scriptCommand(manager, 'prestart', 'prestart script')] : [];
      notes.push(`Start command: scripts.start through \`yarn run start\`${hasPre ? ', after prestart (Yarn berry does not run pre/post scripts itself)' : ''}.`);
      if (hasPost) warnings.push('scripts.poststart is not run: Yarn berry does not run post-scripts. Move that work into the start script or the app.');
      return { beforeStart, start, notes, warnings };
    }
    notes.push(
      `Start command: scripts.start through \`${start.argv.join(' ')}\`` +
        (hasPre || hasPost ? `, which runs ${[hasPre ? 'prestart before it' : '', hasPost ? 'poststart after it exits with status 0' : ''].filter(Boolean).join(' and ')}` : '') +
        '.',
    );
    return { beforeStart: [], start, notes, warnings };
  }

  if (input.main !== undefined && input.main.trim() !== '') {
    const runtime = manager === 'bun' ? 'bun' : 'node';
    const beforeStart = hasPre ? [scriptCommand(manager, 'prestart', 'prestart script')] : [];
    notes.push(`Start command: no scripts.start, so the main file runs with ${runtime} (${input.main}).`);
    if (hasPost) warnings.push('scripts.poststart is not run: there is no scripts.start for it to follow. Add a start script to use it.');
    return { beforeStart, start: { label: `${runtime} ${input.main}`, argv: [runtime, asPathArgument(input.main.trim())] }, notes, warnings };
  }

  const found = input.startCandidates.length > 0 ? ` The repository has ${input.startCandidates.join(', ')}: for example add "scripts": { "start": "node ${input.startCandidates[0]}" }.` : '';
  throw new PlanError(
    'No start command: package.json has no scripts.start and no main, and CC_RUN_COMMAND is not set. ' +
      'slipway looks for a start command in this order: CC_RUN_COMMAND, scripts.start in package.json, main in package.json.' +
      found,
    'Add "scripts": { "start": "node server.js" } (or "main") to package.json and push again, or set CC_RUN_COMMAND.',
  );
}
