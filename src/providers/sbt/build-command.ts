/**
 * The sbt build as one argv: `java <options> -jar <launcher> <goals>`. Pure, so every option is
 * visible in tests and in the printed plan.
 */
import { PLACEHOLDER } from './placeholders.js';

export interface SbtBuildPaths {
  java: string;
  launcher: string;
  repositories: string;
  /** The app's cache folder; sbt's folders go under `<it>/sbt/`. */
  appCache: string;
  /** Heap options (build-heap.ts), before the fixed ones. */
  heap?: string[];
}

export const PLACEHOLDER_PATHS: Omit<SbtBuildPaths, 'java'> = {
  launcher: PLACEHOLDER.launcher,
  repositories: PLACEHOLDER.repositories,
  appCache: PLACEHOLDER.appCache,
};

/**
 * sbt's own folders inside the app cache. boot, ivy, coursier and global must persist for a fast
 * second build; home is the JVM's user.home (the launcher keeps its own coursier cache there);
 * tmp is the JVM's temporary folder, emptied before each build.
 */
export function sbtCacheFolders(appCache: string): Record<'boot' | 'ivy' | 'coursier' | 'global' | 'home' | 'tmp', string> {
  const base = `${appCache}/sbt`;
  return {
    boot: `${base}/boot`,
    ivy: `${base}/ivy`,
    coursier: `${base}/coursier`,
    global: `${base}/global`,
    home: `${base}/home`,
    tmp: `${base}/tmp`,
  };
}

/**
 * Stack as sbt's own script sets it (the heap follows the build flavour: build-heap.ts). A build
 * is a short-lived JVM: stopping the JIT at C1 and using the parallel collector halved the CPU
 * time of a cached `stage` of examples/scala-single on a 2-core machine (43 s -> 21 s user time).
 */
export const SBT_JVM_OPTIONS = [
  '-Xss4m',
  '-XX:ReservedCodeCacheSize=256m',
  '-XX:TieredStopAtLevel=1',
  '-XX:+UseParallelGC',
  '-Dfile.encoding=UTF-8',
];

export function sbtBuildArgv(goals: string[], paths: SbtBuildPaths): string[] {
  const cache = sbtCacheFolders(paths.appCache);
  return [
    paths.java,
    ...(paths.heap ?? []),
    ...SBT_JVM_OPTIONS,
    // Plain, uncoloured lines for the deploy log; no interactive server.
    '-Dsbt.log.noformat=true',
    '-Dsbt.color=false',
    '-Dsbt.supershell=false',
    // sbt binds a "boot server" socket under java.io.tmpdir; when it cannot (a path longer than
    // a Unix socket allows), forcestart lets the build go on without it instead of exiting.
    '-Dsbt.server.forcestart=true',
    // Only the resolvers this machine reaches, for the launcher and the build alike.
    `-Dsbt.repository.config=${paths.repositories}`,
    '-Dsbt.override.build.repos=true',
    // Every cache sbt keeps, in the app's persistent cache folder.
    `-Dsbt.boot.directory=${cache.boot}`,
    `-Dsbt.ivy.home=${cache.ivy}`,
    `-Dsbt.coursier.home=${cache.coursier}`,
    `-Dsbt.global.base=${cache.global}`,
    // The build runs as the app user, whose passwd home does not exist and who cannot write
    // in folders another user's sbt made in /tmp (/tmp/.sbt): the JVM's home and temporary
    // folder are the app's own.
    `-Duser.home=${cache.home}`,
    `-Djava.io.tmpdir=${cache.tmp}`,
    '-jar',
    paths.launcher,
    ...goals,
  ];
}
