/**
 * Which package manager installs the app (docs/behaviour.md: Node.js variables; Node.js and Bun builds, rules 3, 4 and 6).
 *
 * Order of detection when CC_NODE_BUILD_TOOL is not set (first match wins, and a warning names
 * every lockfile when several managers' lockfiles are present):
 *   1. bun.lock or bun.lockb          -> bun (package manager and runtime)
 *   2. pnpm-lock.yaml                 -> pnpm
 *   3. yarn.lock                      -> Yarn: berry when packageManager declares yarn@2+ or the
 *                                        lockfile is in berry's format, otherwise Yarn 1
 *   4. anything else                  -> npm install
 */
import { PlanError } from '../plan.js';
import { declaredMajor, type DeclaredPackageManager } from './package-manager-field.js';
import type { Lockfile } from './project-files.js';

export type PackageManager = 'npm' | 'pnpm' | 'yarn1' | 'yarn-berry' | 'bun' | 'custom';

export interface PackageManagerChoice {
  manager: PackageManager;
  /** For npm: `install` (npm, npm-install, detection) or `ci` (npm-ci). */
  npmCommand: 'install' | 'ci';
  /** For custom: the command from CC_CUSTOM_BUILD_TOOL. */
  customCommand?: string;
  /** Why, for the printed plan. */
  reason: string;
  warnings: string[];
  notes: string[];
}

export const VALID_BUILD_TOOLS = ['bun', 'npm', 'npm-install', 'npm-ci', 'pnpm', 'yarn-berry', 'custom'] as const;
export const LEGACY_BUILD_TOOLS = ['yarn', 'yarn2'] as const;

const LOCKFILE_MANAGER: Record<Lockfile, 'bun' | 'pnpm' | 'yarn' | 'npm'> = {
  'bun.lock': 'bun',
  'bun.lockb': 'bun',
  'pnpm-lock.yaml': 'pnpm',
  'yarn.lock': 'yarn',
  'package-lock.json': 'npm',
  'npm-shrinkwrap.json': 'npm',
};

export interface ChooseInput {
  /** CC_NODE_BUILD_TOOL. */
  buildTool?: string;
  /** CC_CUSTOM_BUILD_TOOL. */
  customBuildTool?: string;
  lockfiles: readonly Lockfile[];
  yarnLockHead?: string;
  declared?: DeclaredPackageManager;
}

/** Berry lockfiles are YAML with a `__metadata` block; Yarn 1's start with a v1 banner. */
export function yarnLockFlavour(head: string | undefined): 'berry' | 'v1' | 'unknown' {
  if (head === undefined) return 'unknown';
  if (/^__metadata:/m.test(head)) return 'berry';
  if (/# yarn lockfile v1/.test(head)) return 'v1';
  return 'unknown';
}

const YARN1_DEPRECATION =
  'Yarn 1.x is deprecated (it gets no more updates). Move to Yarn 4: run `yarn set version stable` and `yarn install` locally, ' +
  'commit package.json (its "packageManager" field) and the new yarn.lock.';
const YARN2_DEPRECATION =
  'Yarn 2.x is deprecated. Move to Yarn 4: run `yarn set version stable` and `yarn install` locally, commit package.json and yarn.lock.';

/** Yarn 2 is deprecated however it was chosen: by detection or by CC_NODE_BUILD_TOOL. */
function warnIfYarn2(declared: DeclaredPackageManager | undefined, warnings: string[]): void {
  if (declared?.name === 'yarn' && declaredMajor(declared) === 2) warnings.push(YARN2_DEPRECATION);
}

function yarnChoice(
  declared: DeclaredPackageManager | undefined,
  head: string | undefined,
  why: string,
  warnings: string[],
  notes: string[],
): PackageManagerChoice {
  const declaredYarn = declared?.name === 'yarn' ? declared : undefined;
  if (declaredYarn) {
    const major = declaredMajor(declaredYarn);
    if (major >= 2) {
      warnIfYarn2(declaredYarn, warnings);
      return {
        manager: 'yarn-berry',
        npmCommand: 'install',
        reason: `${why} and package.json declares "packageManager": "${declaredYarn.raw}" (Yarn ${major}.x)`,
        warnings,
        notes,
      };
    }
    warnings.push(YARN1_DEPRECATION);
    return {
      manager: 'yarn1',
      npmCommand: 'install',
      reason: `${why} and package.json declares "packageManager": "${declaredYarn.raw}" (Yarn 1)`,
      warnings,
      notes,
    };
  }
  if (yarnLockFlavour(head) === 'berry') {
    warnings.push(
      'yarn.lock is in Yarn berry format but package.json has no "packageManager" field: slipway uses the latest packaged Yarn 4.x. ' +
        'Pin your Yarn with `yarn set version <version>` and commit package.json.',
    );
    return {
      manager: 'yarn-berry',
      npmCommand: 'install',
      reason: `${why}, in Yarn berry format (__metadata), and no "packageManager" field`,
      warnings,
      notes,
    };
  }
  warnings.push(YARN1_DEPRECATION);
  return {
    manager: 'yarn1',
    npmCommand: 'install',
    reason: `${why} without a Yarn 2+ "packageManager" field: Yarn 1 (the system Yarn)`,
    warnings,
    notes,
  };
}

function fromBuildTool(value: string, input: ChooseInput, warnings: string[], notes: string[]): PackageManagerChoice {
  const why = `CC_NODE_BUILD_TOOL=${value}`;
  switch (value) {
    case 'bun':
      return { manager: 'bun', npmCommand: 'install', reason: `${why}: Bun installs and runs the app`, warnings, notes };
    case 'npm':
    case 'npm-install':
      return { manager: 'npm', npmCommand: 'install', reason: `${why}: npm install`, warnings, notes };
    case 'npm-ci': {
      if (!input.lockfiles.includes('package-lock.json') && !input.lockfiles.includes('npm-shrinkwrap.json')) {
        throw new PlanError(
          'CC_NODE_BUILD_TOOL=npm-ci runs `npm ci`, which needs package-lock.json (or npm-shrinkwrap.json), and the repository has neither.',
          'Run `npm install` locally and commit package-lock.json, or set CC_NODE_BUILD_TOOL=npm-install.',
        );
      }
      return { manager: 'npm', npmCommand: 'ci', reason: `${why}: npm clean-install from package-lock.json`, warnings, notes };
    }
    case 'pnpm':
      return { manager: 'pnpm', npmCommand: 'install', reason: `${why}: pnpm`, warnings, notes };
    case 'yarn-berry':
      warnIfYarn2(input.declared, warnings);
      return { manager: 'yarn-berry', npmCommand: 'install', reason: `${why}: Yarn berry`, warnings, notes };
    case 'yarn2':
      warnings.push('CC_NODE_BUILD_TOOL=yarn2 is deprecated: set CC_NODE_BUILD_TOOL=yarn-berry instead (same behaviour).');
      warnIfYarn2(input.declared, warnings);
      return {
        manager: 'yarn-berry',
        npmCommand: 'install',
        reason: `${why} (deprecated name of yarn-berry): Yarn berry`,
        warnings,
        notes,
      };
    case 'yarn':
      warnings.push(
        'CC_NODE_BUILD_TOOL=yarn is deprecated: set CC_NODE_BUILD_TOOL=yarn-berry (Yarn 4), or unset it to detect from the lockfile.',
      );
      return yarnChoice(input.declared, input.yarnLockHead, why, warnings, notes);
    case 'custom': {
      const command = input.customBuildTool?.trim();
      if (!command) {
        throw new PlanError(
          'CC_NODE_BUILD_TOOL=custom needs CC_CUSTOM_BUILD_TOOL, the command that installs the app, and it is not set.',
          'Set CC_CUSTOM_BUILD_TOOL (for example `env set CC_CUSTOM_BUILD_TOOL "npm install && npm run build"`), or choose another CC_NODE_BUILD_TOOL.',
        );
      }
      return {
        manager: 'custom',
        npmCommand: 'install',
        customCommand: command,
        reason: `${why}: the build runs CC_CUSTOM_BUILD_TOOL`,
        warnings,
        notes,
      };
    }
    default:
      throw new PlanError(
        `CC_NODE_BUILD_TOOL is "${value}", which is not a known package manager. Valid values: ${VALID_BUILD_TOOLS.join(', ')} ` +
          `(legacy, deprecated: ${LEGACY_BUILD_TOOLS.join(', ')}).`,
        'Set CC_NODE_BUILD_TOOL to one of the valid values, or remove it to detect the package manager from the lockfile.',
      );
  }
}

export function choosePackageManager(input: ChooseInput): PackageManagerChoice {
  const warnings: string[] = [];
  const notes: string[] = [];
  const managersWithLockfiles = [...new Set(input.lockfiles.map((l) => LOCKFILE_MANAGER[l]))];
  const buildTool = input.buildTool?.trim();

  if (buildTool) {
    const ignored = input.lockfiles.filter((l) => {
      const owner = LOCKFILE_MANAGER[l];
      return !(
        owner === buildTool ||
        (owner === 'npm' && buildTool.startsWith('npm')) ||
        (owner === 'yarn' && buildTool.startsWith('yarn'))
      );
    });
    if (ignored.length > 0 && buildTool !== 'custom')
      notes.push(`CC_NODE_BUILD_TOOL=${buildTool} overrides detection: ${ignored.join(', ')} not used.`);
    return fromBuildTool(buildTool, input, warnings, notes);
  }

  if (managersWithLockfiles.length > 1) {
    warnings.push(
      `Several package managers' lockfiles are committed: ${input.lockfiles.join(', ')}. slipway picks by the order ` +
        `bun.lock/bun.lockb, pnpm-lock.yaml, yarn.lock, package-lock.json and used ${input.lockfiles[0]}. ` +
        `Delete the lockfiles of the package managers you do not use (git rm), or set CC_NODE_BUILD_TOOL.`,
    );
  }

  const first = input.lockfiles[0];
  let choice: PackageManagerChoice;
  switch (first === undefined ? 'none' : LOCKFILE_MANAGER[first]) {
    case 'bun':
      choice = { manager: 'bun', npmCommand: 'install', reason: `${first} is present: Bun installs and runs the app`, warnings, notes };
      break;
    case 'pnpm':
      choice = { manager: 'pnpm', npmCommand: 'install', reason: 'pnpm-lock.yaml is present', warnings, notes };
      break;
    case 'yarn':
      choice = yarnChoice(input.declared, input.yarnLockHead, 'yarn.lock is present', warnings, notes);
      break;
    case 'npm':
      choice = { manager: 'npm', npmCommand: 'install', reason: `${first} is present: npm install (the default)`, warnings, notes };
      break;
    default:
      choice = {
        manager: 'npm',
        npmCommand: 'install',
        reason: 'no lockfile and no CC_NODE_BUILD_TOOL: npm install (the default)',
        warnings,
        notes,
      };
  }

  const declared = input.declared;
  const chosenFamily = choice.manager.startsWith('yarn') ? 'yarn' : choice.manager;
  if (declared && declared.name !== chosenFamily) {
    warnings.push(
      `package.json declares "packageManager": "${declared.raw}", but detection chose ${choice.manager} (${choice.reason}). ` +
        `Commit ${declared.name}'s lockfile, or set CC_NODE_BUILD_TOOL=${declared.name === 'yarn' ? 'yarn-berry' : declared.name}.`,
    );
  }
  return choice;
}
