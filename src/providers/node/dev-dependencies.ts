/**
 * Whether devDependencies are installed (SPEC §4.4 rule 5) and the flags that make each
 * package manager do exactly that. The flags are always explicit, so the result never depends
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
