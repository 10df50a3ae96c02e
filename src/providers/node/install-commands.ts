/**
 * The build phase as argv arrays, one install command per package manager, with the
 * devDependencies flags, a cache folder inside the build folder, and no shell.
 *
 * Lifecycle scripts: every supported manager runs the root package's preinstall, install and
 * postinstall (in that order, once each) as part of its install command — verified with npm
 * 11.6.1, pnpm 10.34.9, Yarn 1.22.22, Yarn 4.18.1 and Bun 1.3.1 — so no separate step runs them.
 */
import type { PlanCommand, PlanFile } from '../plan.js';
import type { PackageManagerChoice } from './detect-package-manager.js';
import { customDevSettings, devFlagsFor } from './dev-dependencies.js';
import { USER_CONFIG_DIR, userConfigDir } from './user-config-dir.js';

/** Cache folders, relative to the build folder (see cacheDirs in the plan). */
export const CACHE_DIRS = {
  npm: '.slipway-cache/npm',
  yarn1: '.slipway-cache/yarn',
  berry: '.slipway-cache/yarn-berry',
  bun: '.slipway-cache/bun',
} as const;

/**
 * pnpm's store, in the app's own cache folder rather than the build folder: pnpm records the
 * store's absolute path in node_modules/.modules.yaml and, finding another one, removes the
 * whole node_modules and installs again. Each build has a folder of its own, so a store inside
 * it would make every kept node_modules useless; this path is the same for every build of the
 * app (the pipeline fills the token).
 */
export const PNPM_STORE = '${SLIPWAY_APP_CACHE}/pnpm-store';

/**
 * The installed tree, kept between builds and copied into the release. Every manager here
 * reconciles an existing node_modules with the lockfile (adds, updates, removes what is no
 * longer wanted), so the previous build's tree is a head start: with an unchanged lockfile
 * there is nothing to write.
 */
const installedTree = (): { cacheDirsInRelease: string[] } => ({ cacheDirsInRelease: ['node_modules'] });

export interface InstallInput {
  choice: PackageManagerChoice;
  installDevDependencies: boolean;
  /** Major version of the Yarn berry release (for `workspaces focus`). */
  berryMajor?: number;
  /** The project's .yarnrc.yml, to respect its cache and plugin settings. */
  projectYarnrcYml?: string;
  /** Yarn berry's linker (see berryNodeLinker); Plug'n'Play when absent. */
  berryLinker?: string;
  /** Extra variables for the install command (for example YARN_RC_FILENAME). */
  installEnv: Record<string, string>;
  /** The build folder's absolute path, where the build commands see it too. */
  buildDir: string;
}

export interface InstallPlan {
  build: PlanCommand[];
  /** Files the install command reads (a custom command's global bunfig). */
  files?: PlanFile[];
  cacheDirs: string[];
  /** Among cacheDirs, those the release needs too (see BuildPlan.cacheDirsInRelease). */
  cacheDirsInRelease?: string[];
  notes: string[];
  warnings: string[];
}

const QUIET_NPM = { npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };

/** Yarn berry keeps `workspaces focus` in the workspace-tools plugin before Yarn 4. */
function berryHasWorkspaceTools(major: number, yarnrc: string | undefined): boolean {
  return major >= 4 || (yarnrc !== undefined && /plugin-workspace-tools|workspace-tools/.test(yarnrc));
}

/**
 * Yarn berry's linker: YARN_NODE_LINKER in the app's environment, else nodeLinker in
 * .yarnrc.yml, else Plug'n'Play, berry's default.
 */
export function berryNodeLinker(yarnrc: string | undefined, env: Record<string, string>): string {
  const fromEnv = env.YARN_NODE_LINKER?.trim();
  if (fromEnv) return fromEnv;
  const match = yarnrc === undefined ? null : /^nodeLinker\s*:\s*["']?([A-Za-z-]+)["']?\s*(#.*)?$/m.exec(yarnrc);
  return match ? match[1]! : 'pnp';
}

/** A project with its own cache settings (zero-installs commit .yarn/cache) keeps them. */
function berryOwnsCache(yarnrc: string | undefined): boolean {
  return yarnrc !== undefined && /^\s*(cacheFolder|enableGlobalCache)\s*:/m.test(yarnrc);
}

export function installPlan(input: InstallInput): InstallPlan {
  const { choice, installDevDependencies: dev, installEnv } = input;
  const notes: string[] = [];
  const warnings: string[] = [];
  const flags = devFlagsFor(choice.manager, dev);
  const devWord = dev ? 'with devDependencies' : 'without devDependencies';

  switch (choice.manager) {
    case 'npm':
      // `npm install` reconciles an existing node_modules with package.json and the lockfile
      // (adds, updates, removes, prunes devDependencies when they are omitted), so the previous
      // build's node_modules is a safe head start: most of a build's time is writing it out.
      // `npm ci` deletes node_modules first by design, so it only keeps npm's cache.
      return {
        build: [
          {
            label: `npm ${choice.npmCommand} (${devWord})`,
            argv: ['npm', choice.npmCommand, ...flags],
            env: { ...QUIET_NPM, npm_config_cache: CACHE_DIRS.npm, ...installEnv },
          },
        ],
        cacheDirs: choice.npmCommand === 'install' ? [CACHE_DIRS.npm, 'node_modules'] : [CACHE_DIRS.npm],
        ...(choice.npmCommand === 'install' ? { cacheDirsInRelease: ['node_modules'] } : {}),
        notes,
        warnings,
      };
    case 'pnpm':
      return {
        build: [
          {
            label: `pnpm install (${devWord})`,
            // Not frozen: like `npm install`, a lockfile that lags package.json is updated, not fatal.
            argv: ['pnpm', 'install', ...flags, '--no-frozen-lockfile'],
            env: { npm_config_update_notifier: 'false', npm_config_store_dir: PNPM_STORE, ...installEnv },
          },
        ],
        cacheDirs: ['node_modules'],
        ...installedTree(),
        notes,
        warnings,
      };
    case 'yarn1':
      return {
        build: [
          {
            label: `yarn install (Yarn 1, ${devWord})`,
            argv: ['yarn', 'install', ...flags, '--non-interactive'],
            env: { YARN_CACHE_FOLDER: CACHE_DIRS.yarn1, ...installEnv },
          },
        ],
        cacheDirs: [CACHE_DIRS.yarn1, 'node_modules'],
        ...installedTree(),
        notes,
        warnings,
      };
    case 'yarn-berry': {
      const major = input.berryMajor ?? 4;
      const env: Record<string, string> = {
        YARN_ENABLE_TELEMETRY: '0',
        YARN_ENABLE_IMMUTABLE_INSTALLS: 'false',
        YARN_ENABLE_PROGRESS_BARS: 'false',
        ...installEnv,
      };
      const cacheDirs: string[] = [];
      const cacheDirsInRelease: string[] = [];
      if (berryOwnsCache(input.projectYarnrcYml)) {
        notes.push("Yarn berry keeps the project's own cache settings from .yarnrc.yml (cacheFolder/enableGlobalCache).");
      } else {
        env.YARN_ENABLE_GLOBAL_CACHE = 'false';
        env.YARN_CACHE_FOLDER = CACHE_DIRS.berry;
        cacheDirs.push(CACHE_DIRS.berry);
        if ((input.berryLinker ?? 'pnp') === 'pnp') {
          // .pnp.cjs loads every package from the zip files of this folder: the release needs it,
          // so the build cache keeps a copy instead of moving it out.
          cacheDirsInRelease.push(CACHE_DIRS.berry);
          notes.push(
            `Yarn berry with Plug'n'Play: .pnp.cjs loads packages from the zip files of ${CACHE_DIRS.berry}, so the release keeps that folder (and the next build starts from a copy).`,
          );
        }
      }
      if ((input.berryLinker ?? 'pnp') !== 'pnp') {
        // The node-modules and pnpm linkers write node_modules, which Yarn reconciles with
        // node_modules/.yarn-state.yml.
        cacheDirs.push('node_modules');
        cacheDirsInRelease.push('node_modules');
      }
      const kept = { cacheDirs, ...(cacheDirsInRelease.length > 0 ? { cacheDirsInRelease } : {}) };
      if (dev)
        return { build: [{ label: `yarn install (Yarn ${major}, ${devWord})`, argv: ['yarn', 'install'], env }], ...kept, notes, warnings };
      if (berryHasWorkspaceTools(major, input.projectYarnrcYml)) {
        notes.push(
          'Yarn berry has no production install: `yarn workspaces focus --all --production` installs dependencies without devDependencies.',
        );
        return {
          build: [
            {
              label: `yarn workspaces focus --all --production (Yarn ${major}, ${devWord})`,
              argv: ['yarn', 'workspaces', 'focus', '--all', '--production'],
              env,
            },
          ],
          ...kept,
          notes,
          warnings,
        };
      }
      warnings.push(
        `devDependencies are installed anyway: Yarn ${major} skips them only with \`yarn workspaces focus --production\` from the workspace-tools plugin, which this project does not have. ` +
          'Run `yarn plugin import workspace-tools` and commit .yarnrc.yml and .yarn/plugins, or move to Yarn 4 (built in).',
      );
      return {
        build: [{ label: `yarn install (Yarn ${major}, with devDependencies)`, argv: ['yarn', 'install'], env }],
        ...kept,
        notes,
        warnings,
      };
    }
    case 'bun':
      if (!dev) notes.push('bun install --production also refuses a bun.lock that does not match package.json (frozen lockfile).');
      return {
        build: [
          {
            label: `bun install (${devWord})`,
            argv: ['bun', 'install', ...flags],
            env: { BUN_INSTALL_CACHE_DIR: CACHE_DIRS.bun, ...installEnv },
          },
        ],
        cacheDirs: [CACHE_DIRS.bun, 'node_modules'],
        ...installedTree(),
        notes,
        warnings,
      };
    case 'custom': {
      const settings = customDevSettings(dev);
      notes.push(
        "CC_CUSTOM_BUILD_TOOL runs as the whole install step (through bash: it is the app owner's own command, run in the app's own build sandbox); " +
          `it decides about lifecycle scripts itself. devDependencies: ${dev ? 'npm_config_include=dev and YARN_PRODUCTION=false' : "npm_config_omit=dev, YARN_PRODUCTION=true, npm_config_production=true (pnpm 10) and production = true in Bun's global bunfig"} ` +
          'tell npm, Yarn 1, pnpm and Bun; pnpm 12 and Yarn berry read no such setting, so the command passes --prod or `yarn workspaces focus --production` itself. ' +
          "npm's and Yarn's caches point into the kept cache folders.",
      );
      const env: Record<string, string> = {
        ...QUIET_NPM,
        npm_config_cache: CACHE_DIRS.npm,
        YARN_CACHE_FOLDER: CACHE_DIRS.yarn1,
        ...settings.env,
        ...installEnv,
      };
      const files: PlanFile[] = [];
      if (settings.bunfig) {
        files.push({ path: `${USER_CONFIG_DIR}/.bunfig.toml`, content: settings.bunfig, secret: false });
        env.XDG_CONFIG_HOME = userConfigDir(input.buildDir);
      }
      return {
        build: [{ label: 'CC_CUSTOM_BUILD_TOOL', argv: ['bash', '-c', choice.customCommand ?? ''], env }],
        ...(files.length > 0 ? { files } : {}),
        cacheDirs: [CACHE_DIRS.npm, CACHE_DIRS.yarn1],
        notes,
        warnings,
      };
    }
  }
}
