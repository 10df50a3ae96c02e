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
}

export const PLACEHOLDER_PATHS: Omit<SbtBuildPaths, 'java'> = {
  launcher: PLACEHOLDER.launcher,
  repositories: PLACEHOLDER.repositories,
  appCache: PLACEHOLDER.appCache,
};

/** sbt's own folders inside the app cache: all four must persist for a fast second build. */
export function sbtCacheFolders(appCache: string): Record<'boot' | 'ivy' | 'coursier' | 'global', string> {
  const base = `${appCache}/sbt`;
  return { boot: `${base}/boot`, ivy: `${base}/ivy`, coursier: `${base}/coursier`, global: `${base}/global` };
}

/**
 * Heap and stack sized for one build at a time (-Xss as sbt's own script sets it). A build is a
 * short-lived JVM: stopping the JIT at C1 and using the parallel collector halved the CPU time
 * of a cached `stage` of examples/scala-single on a 2-core machine (43 s -> 21 s user time).
 */
export const SBT_JVM_OPTIONS = [
  '-Xms512m',
  '-Xmx2g',
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
    ...SBT_JVM_OPTIONS,
    // Plain, uncoloured lines for the deploy log; no interactive server.
    '-Dsbt.log.noformat=true',
    '-Dsbt.color=false',
    '-Dsbt.supershell=false',
    '-Dsbt.server.forcestart=false',
    // Only the resolvers this machine reaches, for the launcher and the build alike.
    `-Dsbt.repository.config=${paths.repositories}`,
    '-Dsbt.override.build.repos=true',
    // Every cache sbt keeps, in the app's persistent cache folder.
    `-Dsbt.boot.directory=${cache.boot}`,
    `-Dsbt.ivy.home=${cache.ivy}`,
    `-Dsbt.coursier.home=${cache.coursier}`,
    `-Dsbt.global.base=${cache.global}`,
    '-jar',
    paths.launcher,
    ...goals,
  ];
}
