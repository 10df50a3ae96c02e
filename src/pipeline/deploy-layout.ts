import { join } from 'node:path';

/**
 * Where a deployment's folders are in the data folder, named by ids the platform made (never by
 * anything a push brings). Every folder the pipeline uses comes from here, so the layout reads
 * in one place:
 *
 * ```
 * <data>/builds/<app id>             the app's build folder (one build at a time)
 * <data>/builds/<app id>.secrets     credentials of the running build, beside it
 * <data>/builds/<scratch id>         a commit exported for `slipway plan`
 * <data>/releases/<app id>/<deployment id>   a built release
 * <data>/cache/apps/<app id>         the app's caches between builds (home/, build-cache/)
 * ```
 */
export class DeployLayout {
  constructor(readonly dataDir: string) {}

  /**
   * Where the app's builds run: the same path for each of its builds (they run one at a time),
   * renamed to the release's folder when the build succeeds. Build tools that keep incremental
   * state between builds record absolute paths and name projects after their folder (sbt's
   * project id is the folder's name, its task caches hold paths): in a new path each time they
   * redo work a developer's own checkout never redoes.
   */
  buildFolder(appId: string): string {
    return join(this.dataDir, 'builds', appId);
  }

  /**
   * Build credentials live beside the build folder, so a daemon crash cannot leave them in the
   * app's persistent home: the next start wipes every build folder.
   */
  buildSecretsFolder(appId: string): string {
    return `${this.buildFolder(appId)}.secrets`;
  }

  /** A throw-away export (the plan preview), under an id of its own so it never meets a build. */
  scratchFolder(scratchId: string): string {
    return join(this.dataDir, 'builds', scratchId);
  }

  /** The app's built releases, one folder per deployment that built one. */
  releasesFolder(appId: string): string {
    return join(this.dataDir, 'releases', appId);
  }

  releaseFolder(appId: string, deploymentId: string): string {
    return join(this.releasesFolder(appId), deploymentId);
  }

  /** What the app's builds keep between them: package manager caches, its build HOME. */
  appCacheFolder(appId: string): string {
    return join(this.dataDir, 'cache', 'apps', appId);
  }

  /** HOME of the app's builds, kept with its caches (tools write their own caches there). */
  buildHome(appId: string): string {
    return join(this.appCacheFolder(appId), 'home');
  }
}
