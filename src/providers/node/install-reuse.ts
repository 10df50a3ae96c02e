/**
 * Whether a Node.js install may be skipped when its inputs have not changed since the build
 * that made the kept node_modules. Even with nothing to do, `npm install` costs most of a
 * second of a redeploy (starting npm, reading the tree, checking every package); when the
 * kept tree was written by the same manager at the same version from the same package.json,
 * lockfile and settings, with the same devDependencies choice, running it again changes
 * nothing. The pipeline compares the inputs named here (src/pipeline/install-inputs.ts).
 *
 * The install is never skipped when it does more than write node_modules from the lockfile:
 * root lifecycle scripts (they run on every install, and often build the app), workspaces and
 * local dependencies (the install copies or links files of the repository), a custom command,
 * `npm ci` (it deletes node_modules by design), and Yarn berry (its loader and install state
 * live outside node_modules).
 */
import { createHash } from 'node:crypto';
import type { InstallInputs, ToolRequest } from '../plan.js';
import type { PackageManagerChoice } from './detect-package-manager.js';
import { LOCKFILES } from './project-files.js';

/** Scripts of the root package that an install runs (npm also runs prepare for the root). */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'preprepare', 'prepare', 'postprepare', 'prepublish', 'dependencies'];

/** Files besides package.json and the lockfiles that steer what an install writes. */
const SETTINGS_FILES = ['.npmrc', '.yarnrc', '.yarnrc.yml', 'bunfig.toml', '.pnpmfile.cjs', 'pnpm-workspace.yaml'];

/** Variables of the app's environment that package managers read as settings. */
const SETTING_VARIABLE = /^(npm_config_|yarn_|pnpm_|bun_)/i;

/** A dependency taken from the repository itself rather than from the lockfile's sources. */
const LOCAL_SPEC = /^(file:|link:|portal:|workspace:|\.{1,2}\/|\/|~\/)/;

export interface InstallReuseInput {
  choice: Pick<PackageManagerChoice, 'manager' | 'npmCommand'>;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  /** package.json has a workspaces field, or the repository has pnpm-workspace.yaml. */
  workspaces: boolean;
  toolchain: ToolRequest[];
  installDevDependencies: boolean;
  /** The app's environment (only package-manager settings are read, and only as digests). */
  env: Record<string, string>;
}

export type InstallReuse = { inputs: InstallInputs; note: string } | { inputs?: undefined; note: string };

function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 16);
}

function whyNot(input: InstallReuseInput): string | undefined {
  const { manager, npmCommand } = input.choice;
  if (manager === 'custom') return 'CC_CUSTOM_BUILD_TOOL decides what the install does';
  if (manager === 'yarn-berry') return "Yarn berry keeps its install state and Plug'n'Play loader outside node_modules";
  if (manager === 'npm' && npmCommand === 'ci') return 'npm ci deletes node_modules by design';
  const scripts = INSTALL_SCRIPTS.filter((name) => input.scripts[name] !== undefined);
  if (scripts.length > 0) return `package.json has ${scripts.map((s) => `scripts.${s}`).join(', ')}, which the install runs`;
  if (input.workspaces) return 'the install links or copies the workspaces of the repository';
  const local = Object.entries({ ...input.devDependencies, ...input.dependencies }).filter(([, spec]) => LOCAL_SPEC.test(spec.trim()));
  if (local.length > 0)
    return `${local.map(([name]) => name).join(', ')} come${local.length === 1 ? 's' : ''} from the repository's own folders, which the install copies or links`;
  return undefined;
}

export function installReuse(input: InstallReuseInput): InstallReuse {
  const reason = whyNot(input);
  if (reason) return { note: `The install runs on every build, even with an unchanged lockfile: ${reason}.` };
  const variables = Object.keys(input.env)
    .filter((name) => SETTING_VARIABLE.test(name))
    .sort()
    // A digest of the value: settings may hold a token, and the plan holds no secret.
    .map((name) => `variable ${name} ${digest(input.env[name]!)}`);
  const settings = [
    ...input.toolchain.map((tool) => `${tool.name} ${tool.version}`),
    input.installDevDependencies ? 'with devDependencies' : 'without devDependencies',
    ...variables,
  ];
  return {
    inputs: { files: ['package.json', ...LOCKFILES, ...SETTINGS_FILES], settings },
    note:
      'The install is skipped when the kept node_modules was installed by an earlier successful build from the same package.json, lockfile, ' +
      'package-manager settings and tool versions, with the same devDependencies choice (the deploy log says so).',
  };
}
