import { mkdir, rename, rm, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { BuildPlan } from '../providers/plan.js';
import { checkRelativePath } from '../core/names.js';

/**
 * The package managers' caches of an app, kept between its builds. A plan names them as
 * folders of the build folder; they are moved in before the build and out after it, so
 * they never end up in a release. The cache is keyed on the toolchain's runtimes and major
 * versions: a change of Node major (or of package manager) starts from an empty cache.
 */
export function cacheKey(plan: BuildPlan): string {
  return plan.toolchain
    .map((t) => `${t.name}${t.version.split('.')[0]}`)
    .sort()
    .join('-')
    .replace(/[^a-z0-9-]/gi, '_') || 'none';
}

export class BuildCache {
  constructor(private readonly appCacheDir: string) {}

  private root(): string {
    return join(this.appCacheDir, 'build-cache');
  }

  /** Moves the cached folders into the build folder; returns whether a cache existed. */
  async restore(plan: BuildPlan, buildDir: string): Promise<boolean> {
    const key = cacheKey(plan);
    const keyFile = join(this.root(), 'key');
    const previousKey = await readFile(keyFile, 'utf8').catch(() => '');
    if (previousKey !== key) {
      await rm(this.root(), { recursive: true, force: true });
      await mkdir(this.root(), { recursive: true });
      await writeFile(keyFile, key);
      return false;
    }
    let restored = false;
    for (const dir of plan.cacheDirs) {
      const relative = checkRelativePath('cache folder', dir);
      const cached = join(this.root(), 'dirs', relative);
      if (!existsSync(cached)) continue;
      const target = join(buildDir, relative);
      await rm(target, { recursive: true, force: true });
      await mkdir(dirname(target), { recursive: true });
      await rename(cached, target);
      restored = true;
    }
    // A plan whose caches live outside the build folder (sbt's, in the app cache) has nothing
    // to move: the same toolchain as last time means its caches are there to reuse.
    return restored || plan.cacheDirs.length === 0;
  }

  /** Moves the cache folders out of the build folder, to be restored by the next build. */
  async save(plan: BuildPlan, buildDir: string): Promise<void> {
    for (const dir of plan.cacheDirs) {
      const relative = checkRelativePath('cache folder', dir);
      const source = join(buildDir, relative);
      if (!existsSync(source)) continue;
      const cached = join(this.root(), 'dirs', relative);
      await rm(cached, { recursive: true, force: true });
      await mkdir(dirname(cached), { recursive: true });
      await rename(source, cached);
    }
  }
}
