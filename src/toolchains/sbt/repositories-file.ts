/**
 * The sbt repositories file: `local` plus the machine's Maven repository and nothing else.
 * Passed with -Dsbt.repository.config and -Dsbt.override.build.repos=true, it replaces every
 * resolver sbt and the build would otherwise try, so the launcher never stalls on a host this
 * machine cannot reach.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Log } from './launcher.js';
import { machineMavenRepository, type MavenRepository } from './maven-repository.js';

/** A resolver name of our own: sbt gives `maven-central` a built-in meaning, so avoid it. */
export const MACHINE_REPOSITORY_NAME = 'machine-maven';

export function sbtRepositoriesFileContent(repositoryUrl: string): string {
  const url = repositoryUrl.replace(/\/+$/, '') + '/';
  if (/[\s\n]/.test(url)) throw new Error(`Refusing a Maven repository URL with white space: ${JSON.stringify(repositoryUrl)}`);
  return `[repositories]\n  local\n  ${MACHINE_REPOSITORY_NAME}: ${url}\n`;
}

export function repositoriesFilePath(cacheDir: string): string {
  return join(cacheDir, 'sbt', 'repositories');
}

export async function ensureSbtRepositoriesFile(
  cacheDir: string,
  log?: Log,
  repository?: MavenRepository,
): Promise<{ path: string; repository: MavenRepository }> {
  const chosen = repository ?? (await machineMavenRepository());
  const path = repositoriesFilePath(cacheDir);
  const content = sbtRepositoriesFileContent(chosen.url);
  const current = await readFile(path, 'utf8').catch(() => undefined);
  if (current !== content) {
    await mkdir(join(cacheDir, 'sbt'), { recursive: true });
    const temporary = `${path}.${process.pid}.tmp`;
    await writeFile(temporary, content);
    await rename(temporary, path);
  }
  log?.(`sbt repositories: local and ${chosen.url} (${chosen.source})`);
  return { path, repository: chosen };
}
