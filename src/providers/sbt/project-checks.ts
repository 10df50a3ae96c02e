/**
 * Cheap look at the sbt files before building, to warn early about what `stage` needs
 * (docs/behaviour.md, Project files). Warnings only: a plugin can be added in ways a text search does not see.
 */
import type { UntrustedTree } from '../../sandbox/untrusted-tree.js';

/** The text of the folder's files with these suffixes; a link out of the repository is refused. */
async function readAll(tree: UntrustedTree, dir: string, suffixes: string[]): Promise<string> {
  const texts: string[] = [];
  for (const entry of await tree.list(dir)) {
    if (entry.kind !== 'file' && entry.kind !== 'symlink') continue;
    if (!suffixes.some((s) => entry.name.endsWith(s))) continue;
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
    // A link inside the repository to a folder is not a build file: skip it like a folder.
    if ((await tree.entry(path))?.kind !== 'file') continue;
    texts.push((await tree.readText(path, { truncate: true })) ?? '');
  }
  return texts.join('\n');
}

export interface PackagingFacts {
  /** sbt-native-packager appears in project/*.sbt or project/*.scala. */
  packagerPlugin: boolean;
  /** JavaAppPackaging (or a packaging that implies it) is mentioned in the build definition. */
  javaAppPackaging: boolean;
}

/**
 * sbt plugins that bring sbt-native-packager with them: the packager itself, Play's and Lagom's
 * sbt plugins (each depends on it).
 */
const PACKAGER_SOURCES = /sbt-native-packager|"sbt-plugin"|"lagom-sbt-plugin"/;

/**
 * Plugins whose enabling gives the build a `stage` task: JavaAppPackaging and every archetype or
 * add-on of sbt-native-packager that requires it (server, launcher and classpath jars, jlink,
 * java agents, start scripts, system loaders), the Universal plugin `stage` comes from, and Play's
 * and Lagom's plugins, which enable JavaAppPackaging themselves.
 */
const STAGING_PLUGINS = new RegExp(
  `\\b(${[
    'JavaAppPackaging',
    'JavaServerAppPackaging',
    'LauncherJarPlugin',
    'ClasspathJarPlugin',
    'JlinkPlugin',
    'JavaAgent',
    'BashStartScriptPlugin',
    'BatStartScriptPlugin',
    'AshScriptPlugin',
    'SystemdPlugin',
    'SystemVPlugin',
    'UpstartPlugin',
    'UniversalPlugin',
    'Play[A-Z]\\w*',
    'Lagom[A-Z]\\w*',
  ].join('|')})\\b`,
);

export async function inspectPackaging(tree: UntrustedTree): Promise<PackagingFacts> {
  const projectFiles = await readAll(tree, 'project', ['.sbt', '.scala']);
  const buildFiles = (await readAll(tree, '', ['.sbt'])) + '\n' + projectFiles;
  return {
    packagerPlugin: PACKAGER_SOURCES.test(projectFiles),
    javaAppPackaging: STAGING_PLUGINS.test(buildFiles),
  };
}
