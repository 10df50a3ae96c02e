import { join } from 'node:path';

/**
 * Where a deployment's folders are in the data folder, named by ids the platform made (never by
 * anything a push brings). Every folder the pipeline uses comes from here, so the layout reads
 * in one place:
 *
 * ```
 * <data>/apps/<app id>/              the app's own filesystem (its disk budget: app-disks.ts)
 * <data>/apps/<app id>/repo.git      its git repository
 * <data>/apps/<app id>/build         its build folder (one build at a time)
 * <data>/apps/<app id>/releases/<deployment id>   a built release
 * <data>/apps/<app id>/cache         its caches between builds (home/, build-cache/)
 * <data>/disks/<app id>.img          the image file of that filesystem
 * <data>/build-secrets/<app id>       credentials of its running build (tmpfs: build-secrets-mount.ts)
 * <data>/apps/<app id>/scratch/<id> a commit exported for `slipway plan`
 * <data>/apps/<app id>/sandboxes/<sandbox id>  the writable layer of a running release sandbox
 * <data>/apps/<app id>/pre-run-layers/<release>  what CC_PRE_RUN_HOOK wrote, kept with the release
 * ```
 *
 * Everything an app's pushes and builds write is under its own folder, so one filesystem per
 * app bounds it all. Data folders from before kept releases in `<data>/releases/<app id>`:
 * those stay where their records say until retention removes them (`legacyFolders`); their
 * repositories (`<data>/repos/<app id>.git`) and caches (`<data>/cache/apps/<app id>`) move into
 * the app's filesystem at the first start. `src/core/docs-layout.test.ts` holds the documents to
 * these paths.
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
    return join(this.appFolder(appId), 'build');
  }

  /** The app's own folder: the mount point of its filesystem. */
  appFolder(appId: string): string {
    return join(this.dataDir, 'apps', appId);
  }

  /** Where the apps' filesystem images are kept (root's alone). */
  disksFolder(): string {
    return join(this.dataDir, 'disks');
  }

  diskImage(appId: string): string {
    return join(this.disksFolder(), `${appId}.img`);
  }

  /** The app's bare git repository. */
  repository(appId: string): string {
    return join(this.appFolder(appId), 'repo.git');
  }

  /** Where a data folder from before per-app filesystems kept the app's releases, caches and repository. */
  legacyFolders(appId: string): { releases: string; cache: string; repository: string } {
    return {
      releases: join(this.dataDir, 'releases', appId),
      cache: join(this.dataDir, 'cache', 'apps', appId),
      repository: join(this.dataDir, 'repos', `${appId}.git`),
    };
  }

  /**
   * Build credentials live on a tmpfs, never in the app's filesystem, whose free blocks would
   * keep the bytes of a removed file; a daemon start empties it.
   */
  buildSecretsFolder(appId: string): string {
    return join(this.buildSecretsRoot(), appId);
  }

  buildSecretsRoot(): string {
    return join(this.dataDir, 'build-secrets');
  }

  /**
   * A throw-away export (the plan preview), under an id of its own so it never meets a build;
   * in the app's filesystem, so a commit that unpacks to far more than it weighs (a zip bomb)
   * fills the app's budget, not the data folder.
   */
  scratchFolder(appId: string, scratchId: string): string {
    return join(this.scratchesFolder(appId), scratchId);
  }

  /** The app's throw-away exports, wiped at a daemon start (a crash may leave one). */
  scratchesFolder(appId: string): string {
    return join(this.appFolder(appId), 'scratch');
  }

  /**
   * The writable layers of the app's running release sandboxes (src/sandbox/sandbox-layer.ts):
   * what an instance writes into its folder, in the app's filesystem so its budget bounds it.
   */
  sandboxLayersFolder(appId: string): string {
    return join(this.appFolder(appId), 'sandboxes');
  }

  /**
   * What each release's CC_PRE_RUN_HOOK wrote into the app's folder, kept with the release
   * (src/pipeline/pre-run-layer.ts): root's, no process of the app sees the folder itself.
   */
  preRunLayersFolder(appId: string): string {
    return join(this.appFolder(appId), 'pre-run-layers');
  }

  /** The app's built releases, one folder per deployment that built one. */
  releasesFolder(appId: string): string {
    return join(this.appFolder(appId), 'releases');
  }

  releaseFolder(appId: string, deploymentId: string): string {
    return join(this.releasesFolder(appId), deploymentId);
  }

  /** What the app's builds keep between them: package manager caches, its build HOME. */
  appCacheFolder(appId: string): string {
    return join(this.appFolder(appId), 'cache');
  }

  /** HOME of the app's builds, kept with its caches (tools write their own caches there). */
  buildHome(appId: string): string {
    return join(this.appCacheFolder(appId), 'home');
  }
}
