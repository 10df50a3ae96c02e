/**
 * sbt's incremental state, kept between builds of an app as the Heroku Scala buildpack keeps it:
 * `target/` (zinc's analysis, compiled classes, the update cache), `project/target/` and
 * `project/project/` (the compiled build definition). Without them every deployment compiles
 * every source and the build definition again, which doubled a redeploy's build.
 *
 * zinc records paths relative to the build's root (sbt 1.4+ maps them to ${BASE}) and stamps
 * sources by content hash, so an unchanged source is not compiled again. The rest of sbt's state
 * (project ids named after the folder, task caches holding paths) needs the same path each time:
 * the pipeline builds every deployment of an app in one folder.
 */
import type { UntrustedTree } from '../../sandbox/untrusted-tree.js';

/** The build's own folders, always kept. */
export const SBT_STATE_FOLDERS = ['target', 'project/target', 'project/project'] as const;

/** Folders never taken for a module: sbt's own, and hidden ones (.git, .bsp, .idea). */
const NOT_MODULES = new Set(['project', 'target', 'node_modules']);

/** A module's folder has sources: at most this many modules, this deep, are kept. */
const MAX_MODULES = 64;
const MAX_DEPTH = 2;

/**
 * `<module>/target` for each folder, one or two levels down, that holds a `src` folder (sbt's
 * layout for a module), found through the untrusted tree (a link out of the repository is
 * never followed).
 */
export async function moduleTargets(repository: UntrustedTree): Promise<string[]> {
  const found: string[] = [];
  const visit = async (folder: string, depth: number): Promise<void> => {
    for (const entry of await repository.list(folder)) {
      if (found.length >= MAX_MODULES) return;
      if (entry.kind !== 'folder' || entry.name.startsWith('.') || NOT_MODULES.has(entry.name)) continue;
      const path = folder === '' ? entry.name : `${folder}/${entry.name}`;
      if (await repository.isFolder(`${path}/src`)) found.push(`${path}/target`);
      if (depth < MAX_DEPTH) await visit(path, depth + 1);
    }
  };
  await visit('', 1);
  return found;
}

/**
 * The plan's kept folders: the build's own, the root's and every module's target, and the
 * target of the module named by CC_SBT_TARGET_DIR. Every target folder stays in the release as
 * well (copied out after a successful build rather than moved): the staged app is in one, a
 * CC_RUN_COMMAND may use another, and the error for a binary staged elsewhere lists what it
 * finds there. Only project/target and project/project, the build definition's, are moved.
 */
export function sbtKeptFolders(modules: string[], stageModule: string): { cacheDirs: string[]; cacheDirsInRelease: string[] } {
  const staged = stageModule === '' ? 'target' : `${stageModule}/target`;
  const cacheDirs = [...new Set<string>([...SBT_STATE_FOLDERS, ...modules, staged])];
  return { cacheDirs, cacheDirsInRelease: cacheDirs.filter((dir) => !dir.startsWith('project/')) };
}
