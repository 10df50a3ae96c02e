import type { UntrustedTree } from '../../sandbox/untrusted-tree.js';
import { isSbtVersion } from '../../toolchains/sbt/sbt-version.js';
import { PlanError } from '../plan.js';

/**
 * The default when project/build.properties names no version: the newest 1.x whose launcher
 * AND sbt artifacts were both found on the machine's Maven repository when this was written
 * (a launcher is sometimes published before the matching sbt jars, so "newest launcher" is not
 * a safe rule).
 */
export const DEFAULT_SBT_VERSION = '1.13.0';

/** `sbt.version` from a Java properties text (`key=value`, `key: value` or `key value`, `#`/`!` comments). */
export function sbtVersionFromProperties(text: string): string | undefined {
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const match = /^sbt\.version\s*[=:\s]\s*(.*)$/.exec(line);
    if (match) return match[1]!.trim();
  }
  return undefined;
}

export interface SbtVersionChoice {
  version: string;
  reason: string;
}

export async function chooseSbtVersion(tree: UntrustedTree): Promise<SbtVersionChoice> {
  const text = await tree.readText('project/build.properties');
  if (text === undefined) {
    return { version: DEFAULT_SBT_VERSION, reason: 'no project/build.properties: current sbt 1.x' };
  }
  const version = sbtVersionFromProperties(text);
  if (version === undefined) {
    return { version: DEFAULT_SBT_VERSION, reason: 'project/build.properties has no sbt.version: current sbt 1.x' };
  }
  if (!isSbtVersion(version)) {
    throw new PlanError(
      `project/build.properties says sbt.version=${JSON.stringify(version)}, which is not an exact sbt version.`,
      `Write an exact version, for example sbt.version=${DEFAULT_SBT_VERSION}.`,
    );
  }
  return { version, reason: 'sbt.version in project/build.properties' };
}
