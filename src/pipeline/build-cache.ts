import { lstat } from 'node:fs/promises';
import type { BuildPlan } from '../providers/plan.js';
import { checkRelativePath } from '../core/names.js';
import { RefusedPathError, repositoryTree, UntrustedTree, type Owner } from '../sandbox/untrusted-tree.js';

/**
 * The package managers' caches of an app, kept between its builds. A plan names them as
 * folders of the build folder; they are moved in before the build and out after it, so
 * they never end up in a release. Folders the release needs too (plan.cacheDirsInRelease, such
 * as node_modules) are copied out instead, and only after a successful build, so a half-done
 * install is never reused. The cache is keyed on the toolchain's runtimes and major versions
 * and on what else the plan says its folders depend on (plan.cacheKeyInputs: an exact package
 * manager or sbt version, a JDK build): a change of any starts from an empty cache.
 */
export function cacheKey(plan: BuildPlan): string {
  const majors =
    plan.toolchain
      .map((t) => `${t.name}${t.version.split('.')[0]}`)
      .sort()
      .join('-')
      .replace(/[^a-z0-9-]/gi, '_') || 'none';
  // One line of printable text: the key file is compared whole, and read with a size limit.
  const inputs = (plan.cacheKeyInputs ?? []).map((input) => input.replace(/[^\x20-\x7e]/g, '_'));
  return [majors, ...inputs].join(' | ').slice(0, 1000);
}

/** Where the cache lives in the app's cache folder: the key file, and the folders by their path in the build. */
const CACHE = 'build-cache';
const KEY_FILE = `${CACHE}/key`;
const DIRS = `${CACHE}/dirs`;
/** What the kept installed folders were made from: `{ inputs, dirs }` (see installUnchanged). */
const INSTALLED_FROM = `${CACHE}/installed-from`;

/**
 * Both ends are trees the app writes (its builds have the cache folder mounted writable), so
 * every move goes through the untrusted tree: a link at `.slipway-cache`, at `build-cache` or
 * anywhere on the way never makes root move, copy or delete a folder outside them.
 */
export class BuildCache {
  /** The folders restore() moved into the build folder. */
  private readonly restored = new Set<string>();

  constructor(
    private readonly appCacheDir: string,
    /** The app's user; by default whoever owns the app's cache folder (the platform made it so). */
    private readonly owner?: Owner,
  ) {}

  /** Moves the cached folders into the build folder; returns whether a cache existed. */
  async restore(plan: BuildPlan, buildDir: string): Promise<boolean> {
    const { cache, build } = await this.trees(buildDir);
    const dirs = plan.cacheDirs.map((dir) => checkRelativePath('cache folder', dir));
    // Before anything moves: where a cache folder goes must stay inside the build folder.
    for (const rel of dirs) await refuseCommittedLink(build, rel);
    const key = cacheKey(plan);
    this.restored.clear();
    if (!(await this.usable(cache, key, dirs))) {
      await cache.remove(CACHE);
      await cache.writeFile(KEY_FILE, key);
      return false;
    }
    let restored = false;
    for (const rel of dirs) {
      if (await cache.moveFolderTo(`${DIRS}/${rel}`, build, rel)) {
        restored = true;
        this.restored.add(rel);
      }
    }
    // What is left was kept for folders this plan no longer names (a linker or module changed):
    // it would never be used again, and would grow the cache on every such change.
    await cache.remove(DIRS);
    // A plan whose caches live outside the build folder (sbt's, in the app cache) has nothing
    // to move: the same toolchain as last time means its caches are there to reuse.
    return restored || dirs.length === 0;
  }

  /**
   * Moves the cache folders out of the build folder, to be restored by the next build; copies
   * those the release needs, when the build succeeded. A folder that cannot be kept safely (a
   * link where it or the cache should be) is not kept: the next build starts without it.
   */
  async save(plan: BuildPlan, buildDir: string, buildSucceeded = true, installedFrom?: string): Promise<void> {
    const { cache, build } = await this.trees(buildDir);
    const inRelease = new Set(plan.cacheDirsInRelease ?? []);
    // The installed folders kept, and whether every one the build has could be kept.
    const kept: string[] = [];
    let keptAll = true;
    for (const dir of plan.cacheDirs) {
      const rel = checkRelativePath('cache folder', dir);
      if (inRelease.has(dir) && !buildSucceeded) continue;
      try {
        if (!inRelease.has(dir)) await build.moveFolderTo(rel, cache, `${DIRS}/${rel}`);
        // An install with nothing to install (no dependency) may write no node_modules at all.
        else if ((await build.entry(rel)) === undefined) continue;
        else if (await build.copyFolderTo(rel, cache, `${DIRS}/${rel}`)) kept.push(rel);
        else keptAll = false;
      } catch (error) {
        if (!(error instanceof RefusedPathError)) throw error;
        if (inRelease.has(dir)) keptAll = false;
      }
    }
    if (buildSucceeded && keptAll && installedFrom !== undefined)
      await cache.writeFile(INSTALLED_FROM, JSON.stringify({ inputs: installedFrom, dirs: kept }));
    else await cache.remove(INSTALLED_FROM);
  }

  /**
   * True when the installed folders now in the build folder were made by a successful build
   * from these same install inputs (installInputsDigest): each folder that build kept was
   * restored, and no other installed folder is there (a committed node_modules, say). Call it
   * after restore() and before the build writes anything.
   */
  async installUnchanged(plan: BuildPlan, buildDir: string, inputs: string | undefined): Promise<boolean> {
    if (inputs === undefined) return false;
    const { cache, build } = await this.trees(buildDir);
    let recorded: unknown;
    try {
      recorded = JSON.parse((await cache.readText(INSTALLED_FROM, { maxBytes: 4096 })) ?? 'null');
    } catch (error) {
      // A record the app's builds garbled (they may write the cache folder) just means: install.
      if (error instanceof RefusedPathError || error instanceof SyntaxError) return false;
      throw error;
    }
    if (!isInstallRecord(recorded) || recorded.inputs !== inputs) return false;
    for (const dir of plan.cacheDirsInRelease ?? []) {
      const wanted = recorded.dirs.includes(dir);
      if (wanted && !this.restored.has(dir)) return false;
      if (!wanted && (await build.entry(checkRelativePath('cache folder', dir)).catch(() => 'refused')) !== undefined) return false;
    }
    return true;
  }

  /** The key matches and nothing in the cache leads out of it. */
  private async usable(cache: UntrustedTree, key: string, dirs: string[]): Promise<boolean> {
    try {
      if ((await cache.readText(KEY_FILE, { maxBytes: 1024 })) !== key) return false;
      for (const rel of dirs) await cache.entry(`${DIRS}/${rel}`);
      return true;
    } catch (error) {
      if (error instanceof RefusedPathError) return false;
      throw error;
    }
  }

  private async trees(buildDir: string): Promise<{ cache: UntrustedTree; build: UntrustedTree }> {
    const owner = this.owner ?? (await lstat(this.appCacheDir).then((info) => ({ uid: info.uid, gid: info.gid })));
    return {
      cache: new UntrustedTree(this.appCacheDir, { name: "the app's cache folder", owner }),
      build: repositoryTree(buildDir, owner),
    };
  }
}

function isInstallRecord(value: unknown): value is { inputs: string; dirs: string[] } {
  const record = value as { inputs?: unknown; dirs?: unknown } | null;
  return (
    typeof record === 'object' &&
    record !== null &&
    typeof record.inputs === 'string' &&
    Array.isArray(record.dirs) &&
    record.dirs.every((d) => typeof d === 'string')
  );
}

/** A committed `.slipway-cache -> /somewhere` fails the deployment, saying what to remove. */
export async function refuseCommittedLink(build: UntrustedTree, rel: string): Promise<void> {
  try {
    await build.entry(rel);
  } catch (error) {
    if (!(error instanceof RefusedPathError)) throw error;
    const top = rel.split('/')[0]!;
    throw new RefusedPathError(
      error.message,
      `slipway writes ${rel} during the build: remove ${top} from the repository (\`git rm --cached ${top}\`, and add it to .gitignore), then push again.`,
    );
  }
}
