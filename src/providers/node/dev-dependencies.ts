/**
 * Whether devDependencies are installed (docs/behaviour.md: Node.js and Bun builds, rule 5) and the flags or settings that make
 * each package manager do exactly that. The flags are always explicit, so the result never depends
 * on a manager's own reading of NODE_ENV (pnpm 10 dropped it, Bun 1.3 ignores it).
 */
import { PlanError } from '../plan.js';
import type { PackageManager } from './detect-package-manager.js';

export interface DevDependenciesDecision {
  install: boolean;
  reason: string;
}

/**
 * | NODE_ENV   | CC_NODE_DEV_DEPENDENCIES | devDependencies |
 * | any        | install                  | installed       |
 * | any        | ignore                   | not installed   |
 * | production | unset                    | not installed   |
 * | otherwise  | unset                    | installed       |
 */
export function decideDevDependencies(env: Record<string, string>): DevDependenciesDecision {
  const setting = env.CC_NODE_DEV_DEPENDENCIES?.trim();
  if (setting === 'install') return { install: true, reason: 'CC_NODE_DEV_DEPENDENCIES=install' };
  if (setting === 'ignore') return { install: false, reason: 'CC_NODE_DEV_DEPENDENCIES=ignore' };
  if (setting) {
    throw new PlanError(
      `CC_NODE_DEV_DEPENDENCIES is "${setting}"; valid values are install and ignore.`,
      'Set it to install or ignore, or remove it to follow NODE_ENV.',
    );
  }
  if (env.NODE_ENV === 'production') return { install: false, reason: 'NODE_ENV=production and CC_NODE_DEV_DEPENDENCIES unset' };
  const nodeEnv = env.NODE_ENV === undefined ? 'NODE_ENV unset' : `NODE_ENV=${env.NODE_ENV}`;
  return { install: true, reason: `${nodeEnv} and CC_NODE_DEV_DEPENDENCIES unset` };
}

/** Install flags for npm (`install` and `ci`): --include beats --omit and NODE_ENV. */
export function npmDevFlags(install: boolean): string[] {
  return install ? ['--include=dev'] : ['--omit=dev'];
}

/** pnpm: `--prod` skips devDependencies; `--prod=false` installs everything whatever NODE_ENV says. */
export function pnpmDevFlags(install: boolean): string[] {
  return install ? ['--prod=false'] : ['--prod'];
}

/** Yarn 1: --production=true|false overrides NODE_ENV. */
export function yarn1DevFlags(install: boolean): string[] {
  return [`--production=${install ? 'false' : 'true'}`];
}

/** Bun: plain install always installs devDependencies (even with NODE_ENV=production). */
export function bunDevFlags(install: boolean): string[] {
  return install ? [] : ['--production'];
}

/** Managers whose install command takes the decision as flags (berry and custom do not). */
export function devFlagsFor(manager: PackageManager, install: boolean): string[] {
  switch (manager) {
    case 'npm':
      return npmDevFlags(install);
    case 'pnpm':
      return pnpmDevFlags(install);
    case 'yarn1':
      return yarn1DevFlags(install);
    case 'bun':
      return bunDevFlags(install);
    default:
      return [];
  }
}

/**
 * CC_CUSTOM_BUILD_TOOL is the owner's own command, so the decision reaches it as the settings
 * each manager reads from its environment or user configuration, which beat NODE_ENV (verified
 * with npm 11.6.1, Yarn 1.22.22, pnpm 10.34.9 and 12.21.0, Bun 1.3.1):
 * - npm: npm_config_include=dev / npm_config_omit=dev;
 * - Yarn 1: YARN_PRODUCTION=false / true;
 * - pnpm 10: npm_config_production=true skips them (pnpm ignores NODE_ENV, so it installs them otherwise);
 * - Bun: `production = true` in the global bunfig ($XDG_CONFIG_HOME/.bunfig.toml) skips them
 *   (a project bunfig.toml with an [install] table replaces that table);
 * - pnpm 12 and Yarn berry read no such setting: the command passes --prod or
 *   `workspaces focus --production` itself.
 */
export interface CustomDevSettings {
  env: Record<string, string>;
  /** Content of the global bunfig, when Bun must be told. */
  bunfig?: string;
}

export function customDevSettings(install: boolean): CustomDevSettings {
  if (install) return { env: { npm_config_include: 'dev', YARN_PRODUCTION: 'false' } };
  return {
    env: { npm_config_omit: 'dev', YARN_PRODUCTION: 'true', npm_config_production: 'true' },
    bunfig: '[install]\nproduction = true\n',
  };
}
