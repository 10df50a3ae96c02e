/**
 * Makes an sbt plan runnable: fetches the launcher, writes the repositories file and fills the
 * path tokens of the build commands: the provider's `prepare`, called before the plan is
 * printed; after the build the provider's `resolveStart` (resolveSbtBinary) names the start command.
 */
import { mkdir, stat } from 'node:fs/promises';
import { dirname, relative } from 'node:path';
import { RefusedPathError, UntrustedTree } from '../../sandbox/untrusted-tree.js';
import { ensureSbtLauncher, launcherPath, type Log } from '../../toolchains/sbt/launcher.js';
import type { MavenRepository } from '../../toolchains/sbt/maven-repository.js';
import { ensureSbtRepositoriesFile, repositoriesFilePath } from '../../toolchains/sbt/repositories-file.js';
import { PlanError, type BuildPlan } from '../plan.js';
import { sbtCacheFolders } from './build-command.js';
import { fillPlaceholders } from './placeholders.js';

export interface SbtPrepareOptions {
  /** Shared toolchain cache (launcher jars, repositories file). */
  toolchainCacheDir: string;
  /** This app's cache folder, kept between its builds. */
  appCacheDir: string;
  log?: Log;
  /** Use this repository instead of asking Maven (tests, or a pipeline that already asked). */
  repository?: MavenRepository;
}

export async function prepareSbtPlan(plan: BuildPlan, options: SbtPrepareOptions): Promise<BuildPlan> {
  const sbt = plan.toolchain.find((t) => t.name === 'sbt');
  if (plan.provider !== 'sbt' || !sbt) throw new PlanError(`prepareSbtPlan got a ${plan.provider} plan without an sbt toolchain.`);
  const [{ jarPath }, repositories] = await Promise.all([
    ensureSbtLauncher(options.toolchainCacheDir, sbt.version, options.log),
    ensureSbtRepositoriesFile(options.toolchainCacheDir, options.log, options.repository),
  ]);
  await prepareSbtCacheFolders(options.appCacheDir, options.log);
  const values = { launcher: jarPath, repositories: repositories.path, appCache: options.appCacheDir };
  return withPaths(plan, values, pathNotes(sbt.version, values, { launcher: true, repositories: true }));
}

/** Where the launcher and the repositories file are: the same words in the deploy log and in `slipway plan`. */
function pathNotes(
  version: string,
  paths: { launcher: string; repositories: string },
  present: { launcher: boolean; repositories: boolean },
): string[] {
  const notYet = (there: boolean, what: string) => (there ? '' : ` (not yet ${what}: the build does it)`);
  return [
    `sbt launcher ${version}: ${paths.launcher}${notYet(present.launcher, 'installed')}.`,
    `sbt's repositories file: ${paths.repositories}${notYet(present.repositories, 'written')}.`,
  ];
}

function withPaths(plan: BuildPlan, values: { launcher: string; repositories: string; appCache: string }, notes: string[]): BuildPlan {
  const fill = <T extends { argv: string[] }>(command: T): T => ({ ...command, argv: fillPlaceholders(command.argv, values) });
  return { ...plan, build: plan.build.map(fill), beforeStart: plan.beforeStart.map(fill), notes: [...plan.notes, ...notes] };
}

/**
 * The plan with the paths prepareSbtPlan would fill in, fetching and writing nothing (`slipway
 * plan`): the launcher and repositories file at the places the build puts them.
 */
export async function previewSbtPlan(
  plan: BuildPlan,
  options: Pick<SbtPrepareOptions, 'toolchainCacheDir' | 'appCacheDir'>,
): Promise<BuildPlan> {
  const sbt = plan.toolchain.find((t) => t.name === 'sbt');
  if (plan.provider !== 'sbt' || !sbt) throw new PlanError(`previewSbtPlan got a ${plan.provider} plan without an sbt toolchain.`);
  const values = {
    launcher: launcherPath(options.toolchainCacheDir, sbt.version),
    repositories: repositoriesFilePath(options.toolchainCacheDir),
    appCache: options.appCacheDir,
  };
  const isFile = (path: string) =>
    stat(path).then(
      (s) => s.isFile(),
      () => false,
    );
  return withPaths(
    plan,
    values,
    pathNotes(sbt.version, values, { launcher: await isFile(values.launcher), repositories: await isFile(values.repositories) }),
  );
}

/**
 * sbt's folders in the app's cache, made when missing, with the previous build's temporary files
 * gone. The cache is written by the app's builds: a link there (`sbt -> /etc`) must not make
 * root delete or create anything outside it, so such a cache is discarded (the link itself
 * removed) and made again.
 */
export async function prepareSbtCacheFolders(appCacheDir: string, log?: Log): Promise<void> {
  // The folder itself is the platform's (the pipeline makes it for the app's user); below it is the app's.
  await mkdir(appCacheDir, { recursive: true, mode: 0o700 });
  const cache = new UntrustedTree(appCacheDir, { name: "the app's cache folder" });
  const folders = sbtCacheFolders(appCacheDir);
  const inCache = (folder: string) => relative(appCacheDir, folder);
  const makeFolders = async () => {
    // Builds of one app run one at a time, so the previous build's temporary files can go.
    await cache.remove(inCache(folders.tmp));
    for (const folder of Object.values(folders)) await cache.makeFolder(inCache(folder));
  };
  try {
    await makeFolders();
  } catch (error) {
    if (!(error instanceof RefusedPathError)) throw error;
    log?.(`sbt's caches are rebuilt from scratch: ${error.message}`);
    await cache.remove(inCache(dirname(folders.tmp)));
    await makeFolders();
  }
}
