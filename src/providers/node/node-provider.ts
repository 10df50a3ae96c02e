/**
 * The `node` provider: turns a Node.js/Bun source folder and its environment into a build plan
 * (docs/behaviour.md: Variables, Project files, Node.js and Bun builds, Private dependencies, Versions). Each decision lives in its own module; this file reads
 * the project once and puts the decisions together, in the order the deploy log prints them.
 */
import { NODE_APP_TYPE } from '../app-types.js';
import path from 'node:path';
import { repositoryTree } from '../../sandbox/untrusted-tree.js';
import { PlanError, type BuildPlan, type PlanContext, type Provider } from '../plan.js';
import { nodeCacheKeyInputs } from './cache-key-inputs.js';
import { npmConfiguredRegistry } from './default-registry.js';
import { choosePackageManager, type PackageManager } from './detect-package-manager.js';
import { decideDevDependencies } from './dev-dependencies.js';
import { hygieneWarnings } from './hygiene.js';
import { berryNodeLinker, installPlan } from './install-commands.js';
import { installReuse } from './install-reuse.js';
import { parseMiseTools, type MiseTools } from './mise.js';
import { parsePackageManagerField } from './package-manager-field.js';
import { readProjectFiles } from './project-files.js';
import { readPackageJson } from './read-package-json.js';
import { registryAuth } from './registry-auth.js';
import { resolveToolVersions } from './resolve-tool-versions.js';
import { startPlan } from './start-command.js';

export interface NodeProviderOptions {
  /**
   * The default registry URL (npm's configuration), used to scope NPM_TOKEN/CC_NPM_BASIC_AUTH
   * when CC_NPM_REGISTRY is not set. Asked only then. Defaults to `npm config get registry`.
   * A `npm_config_registry` variable in the app's environment takes precedence, as it does for npm.
   */
  defaultRegistry?: () => Promise<string> | string;
}

const MANAGER_NAMES: Record<PackageManager, string> = {
  npm: 'npm',
  pnpm: 'pnpm',
  yarn1: 'Yarn 1',
  'yarn-berry': 'Yarn berry',
  bun: 'Bun',
  custom: 'custom (CC_CUSTOM_BUILD_TOOL)',
};

function isTrue(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());
}

/** CC_MISE_FILE_PATH must name a file inside the source folder. */
function safeMisePath(value: string): string {
  const normal = path.posix.normalize(value.trim().replace(/\\/g, '/'));
  if (normal === '' || normal === '.' || normal.startsWith('/') || normal === '..' || normal.startsWith('../') || normal.includes('\0')) {
    throw new PlanError(
      `CC_MISE_FILE_PATH is "${value}", which is not a path inside the repository.`,
      'Set it to a relative path such as config/mise.toml, or remove it.',
    );
  }
  return normal;
}

export function makeNodeProvider(options: NodeProviderOptions = {}): Provider {
  return {
    name: NODE_APP_TYPE.name,
    label: NODE_APP_TYPE.label,

    async detect(sourceDir: string): Promise<boolean> {
      // A package.json that is a link out of the repository is refused here, by name.
      return repositoryTree(sourceDir).isFile('package.json');
    },

    notDetected() {
      return {
        message: 'This is a node application but the commit has no package.json at the repository root.',
        hint: 'Commit it (`npm init -y` writes one), or create the application with the right --type.',
      };
    },

    async plan(context: PlanContext): Promise<BuildPlan> {
      const { env, sourceDir } = context;
      // Every file of the repository is read through it: links out of it are refused.
      const repository = repositoryTree(sourceDir);
      const pkg = await readPackageJson(repository);
      const declared = parsePackageManagerField(pkg.packageManager);
      const miseDisabled = isTrue(env.CC_DISABLE_MISE);
      const miseOverride = env.CC_MISE_FILE_PATH?.trim() ? safeMisePath(env.CC_MISE_FILE_PATH) : undefined;
      const files = await readProjectFiles(repository, miseOverride);

      const notes: string[] = [];
      const warnings: string[] = [];

      const choice = choosePackageManager({
        buildTool: env.CC_NODE_BUILD_TOOL,
        customBuildTool: env.CC_CUSTOM_BUILD_TOOL,
        lockfiles: files.lockfiles,
        yarnLockHead: files.yarnLockHead,
        declared,
      });
      notes.push(`Package manager: ${MANAGER_NAMES[choice.manager]}, because ${choice.reason}.`, ...choice.notes);
      warnings.push(...choice.warnings);

      const dev = decideDevDependencies(env);
      notes.push(
        `devDependencies: ${dev.install ? 'installed' : 'not installed'} (${dev.reason}; CC_NODE_DEV_DEPENDENCIES=install or ignore decides, and when it is unset they are left out only with NODE_ENV=production).`,
      );
      if (env.NODE_ENV === undefined) {
        warnings.push(
          'NODE_ENV is not set: an app in production needs NODE_ENV=production (`slipway env set NODE_ENV production`). Until then devDependencies are installed and most frameworks run in development mode.',
        );
      }

      let mise: MiseTools | undefined;
      if (miseDisabled) {
        if (files.mise) notes.push(`${files.mise.path} is not read: CC_DISABLE_MISE is set.`);
      } else if (files.mise) {
        mise = parseMiseTools(files.mise.text, files.mise.path);
        warnings.push(...mise.warnings);
      } else if (miseOverride) {
        throw new PlanError(
          `CC_MISE_FILE_PATH is "${miseOverride}", but there is no such file in the repository.`,
          'Fix the path or remove CC_MISE_FILE_PATH.',
        );
      }

      const versions = await resolveToolVersions({
        manager: choice.manager,
        engines: pkg.engines,
        declared,
        env,
        mise,
        miseFile: files.mise?.path,
        catalog: context.catalog,
      });
      notes.push(...versions.notes);

      const auth = await registryAuth({
        env,
        manager: choice.manager,
        projectNpmrc: files.npmrc,
        projectYarnrcYml: files.yarnrcYml,
        buildDir: sourceDir,
        defaultRegistry: async () =>
          env.npm_config_registry ??
          env.NPM_CONFIG_REGISTRY ??
          (options.defaultRegistry ? await options.defaultRegistry() : await npmConfiguredRegistry()),
      });

      const yarn = versions.toolchain.find((t) => t.name === 'yarn');
      const install = installPlan({
        choice,
        installDevDependencies: dev.install,
        berryMajor: yarn ? Number(yarn.version.split('.')[0]) : undefined,
        projectYarnrcYml: files.yarnrcYml,
        berryLinker: berryNodeLinker(files.yarnrcYml, env),
        installEnv: auth.installEnv,
        buildDir: sourceDir,
      });
      notes.push(...install.notes);
      warnings.push(...install.warnings);

      const lifecycle = ['preinstall', 'install', 'postinstall'].filter((s) => pkg.scripts[s] !== undefined);
      if (lifecycle.length > 0 && choice.manager !== 'custom') {
        notes.push(`Build scripts ${lifecycle.join(', ')}: run once each by the install command itself, in that order.`);
      }
      if (pkg.scripts.build !== undefined) {
        notes.push(
          'scripts.build is not run: slipway runs preinstall, install and postinstall at build time and prestart, start and poststart at run time, nothing else. Call the build from postinstall if the app needs it.',
        );
      }

      const start = startPlan({
        manager: choice.manager,
        berryLinker: choice.manager === 'yarn-berry' ? berryNodeLinker(files.yarnrcYml, env) : undefined,
        packageName: pkg.name,
        packageVersion: pkg.version,
        userAgent: managerUserAgent(choice.manager, versions.toolchain),
        scripts: pkg.scripts,
        main: pkg.main,
        runCommand: env.CC_RUN_COMMAND,
        startCandidates: files.startCandidates,
      });
      notes.push(...start.notes);
      warnings.push(...start.warnings);
      notes.push(...auth.notes);
      warnings.push(...auth.warnings);

      if (mise?.deno) notes.push(`Deno from ${files.mise?.path ?? 'mise.toml'} is on PATH at build and run.`);
      const cacheKeyInputs = nodeCacheKeyInputs(choice.manager, versions.toolchain, dev.install);
      if (install.cacheDirs.length > 0) {
        notes.push(
          `Kept between builds of this app: ${install.cacheDirs.join(', ')} (discarded when the Node.js major, the package manager or its version, or the devDependencies choice changes).`,
        );
      }

      const reuse = installReuse({
        choice,
        scripts: pkg.scripts,
        dependencies: pkg.dependencies,
        devDependencies: pkg.devDependencies,
        workspaces: pkg.workspaces === true || (await repository.entry('pnpm-workspace.yaml')) !== undefined,
        toolchain: versions.toolchain,
        installDevDependencies: dev.install,
        env,
      });
      notes.push(reuse.note);
      const build = reuse.inputs ? install.build.map((command) => ({ ...command, skipWhenUnchanged: reuse.inputs })) : install.build;

      warnings.push(...hygieneWarnings({ gitignore: files.gitignore, nodeModulesCommitted: files.nodeModulesCommitted }));

      return {
        provider: 'node',
        toolchain: versions.toolchain,
        env: { npm_config_update_notifier: 'false' },
        files: [...auth.files, ...(install.files ?? [])],
        // The start command's own build steps see the configuration the install had (cache folder).
        build: [...build, ...start.build.map((step) => ({ ...step, env: { ...install.build.at(-1)?.env, ...step.env } }))],
        beforeStart: start.beforeStart,
        start: start.start,
        cacheDirs: install.cacheDirs,
        ...(install.cacheDirsInRelease ? { cacheDirsInRelease: install.cacheDirsInRelease } : {}),
        cacheKeyInputs,
        warnings,
        notes,
      };
    },
  };
}

/**
 * npm_config_user_agent as the package manager sets it for the scripts it runs: apps that look
 * at which manager started them (its first word) see the same without the manager staying.
 */
function managerUserAgent(manager: string, toolchain: ReadonlyArray<{ name: string; version: string }>): string | undefined {
  const tool = manager === 'yarn1' || manager === 'yarn-berry' ? 'yarn' : manager === 'custom' ? 'npm' : manager;
  const version = toolchain.find((t) => t.name === tool)?.version;
  const node = toolchain.find((t) => t.name === 'node')?.version;
  if (!version) return undefined;
  // The platform words npm adds after these are left out: a plan does not depend on the machine.
  return `${tool}/${version}${node ? ` node/v${node}` : ''}`;
}

/** The provider with npm's configured registry as the default registry. */
export const nodeProvider: Provider = makeNodeProvider();
