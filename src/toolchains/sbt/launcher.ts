/**
 * The sbt launcher jar (`org.scala-sbt:sbt-launch:<version>`), fetched once per version into
 * the shared toolchain cache with the machine's own Maven, so mirrors and proxies configured
 * for Maven apply and no repository host appears in our code.
 */
import { mkdir, mkdtemp, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PlanError } from '../../core/errors.js';
import { runTool, tail } from './run-tool.js';
import { isSbtVersion } from './sbt-version.js';

export type Log = (line: string) => void;

export function launcherPath(cacheDir: string, version: string): string {
  return join(cacheDir, 'sbt-launch', version, `sbt-launch-${version}.jar`);
}

async function isJar(path: string): Promise<boolean> {
  try {
    const info = await stat(path);
    if (!info.isFile() || info.size < 1024) return false;
    const handle = await open(path, 'r');
    try {
      const head = Buffer.alloc(2);
      await handle.read(head, 0, 2, 0);
      return head.toString('latin1') === 'PK';
    } finally {
      await handle.close();
    }
  } catch {
    return false;
  }
}

/** The Maven command that copies the launcher jar into `outputDirectory` (pure, for tests and logs). */
export function launcherFetchArgv(version: string, outputDirectory: string): string[] {
  return [
    'mvn',
    '-B',
    '-q',
    '--no-transfer-progress',
    'dependency:copy',
    `-Dartifact=org.scala-sbt:sbt-launch:${version}`,
    `-DoutputDirectory=${outputDirectory}`,
  ];
}

export async function ensureSbtLauncher(cacheDir: string, version: string, log?: Log): Promise<{ jarPath: string }> {
  if (!isSbtVersion(version)) {
    throw new PlanError(
      `"${version}" is not an sbt version.`,
      'Write an exact version in project/build.properties, for example sbt.version=1.13.0.',
    );
  }
  const jarPath = launcherPath(cacheDir, version);
  if (await isJar(jarPath)) {
    log?.(`sbt launcher ${version}: cached at ${jarPath}`);
    return { jarPath };
  }
  const versionDir = join(cacheDir, 'sbt-launch', version);
  await mkdir(versionDir, { recursive: true });
  // Fetch into a private folder, then rename: concurrent builds never see half a jar.
  const staging = await mkdtemp(join(versionDir, '.fetch-'));
  try {
    log?.(`sbt launcher ${version}: fetching org.scala-sbt:sbt-launch:${version} with Maven`);
    const started = Date.now();
    const run = await runTool(launcherFetchArgv(version, staging), { cwd: staging, timeoutMs: 10 * 60_000 });
    const fetched = (await readdir(staging)).find((f) => f.endsWith('.jar'));
    if (run.code !== 0 || !fetched || !(await isJar(join(staging, fetched)))) {
      throw new PlanError(
        `The sbt launcher ${version} could not be fetched from the machine's Maven repository ` +
          `(mvn exited with ${run.code}):\n${tail(run.stdout + '\n' + run.stderr)}`,
        `Check that sbt ${version} exists (sbt.version in project/build.properties) and that ` +
          '`mvn dependency:get -Dartifact=org.scala-sbt:sbt-launch:' +
          version +
          '` works on this machine.',
      );
    }
    await rename(join(staging, fetched), jarPath);
    log?.(`sbt launcher ${version}: fetched in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return { jarPath };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
