/**
 * Cheap look at the sbt files before building, to warn early about what `stage` needs
 * (SPEC §2.3). Warnings only: a plugin can be added in ways a text search does not see.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

async function readAll(dir: string, suffixes: string[]): Promise<string> {
  const names = await readdir(dir).catch(() => []);
  const texts = await Promise.all(
    names.filter((n) => suffixes.some((s) => n.endsWith(s))).map((n) => readFile(join(dir, n), 'utf8').catch(() => '')),
  );
  return texts.join('\n');
}

export interface PackagingFacts {
  /** sbt-native-packager appears in project/*.sbt or project/*.scala. */
  packagerPlugin: boolean;
  /** JavaAppPackaging (or a packaging that implies it) is mentioned in the build definition. */
  javaAppPackaging: boolean;
}

export async function inspectPackaging(sourceDir: string): Promise<PackagingFacts> {
  const projectFiles = await readAll(join(sourceDir, 'project'), ['.sbt', '.scala']);
  const buildFiles = (await readAll(sourceDir, ['.sbt'])) + '\n' + projectFiles;
  return {
    packagerPlugin: /sbt-native-packager/.test(projectFiles),
    javaAppPackaging: /JavaAppPackaging|JavaServerAppPackaging|PlayScala|PlayJava|PlayService/.test(buildFiles),
  };
}
