import { mkdir, rename, rm, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { BuildPlan } from '../providers/plan.js';
import { checkRelativePath } from '../core/names.js';
import { runCommand } from '../executor/run-command.js';

/**
 * The package managers' caches of an app, kept between its builds. A plan names them as
 * folders of the build folder; they are moved in before the build and out after it, so
 * they never end up in a release. Folders the release needs too (plan.cacheDirsInRelease, such
 * as node_modules) are copied out instead, and only after a successful build, so a half-done
 * install is never reused. The cache is keyed on the toolchain's runtimes and major versions:
 * a change of Node major (native modules' ABI) or of package manager starts from an empty cache.
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

  /**
   * Moves the cache folders out of the build folder, to be restored by the next build; copies
   * those the release needs, when the build succeeded.
   */
  async save(plan: BuildPlan, buildDir: string, buildSucceeded = true): Promise<void> {
    const inRelease = new Set(plan.cacheDirsInRelease ?? []);
    for (const dir of plan.cacheDirs) {
      const relative = checkRelativePath('cache folder', dir);
      const source = join(buildDir, relative);
      if (inRelease.has(dir) && !buildSucceeded) continue;
      if (!existsSync(source)) continue;
      const cached = join(this.root(), 'dirs', relative);
      await rm(cached, { recursive: true, force: true });
      await mkdir(dirname(cached), { recursive: true });
      if (inRelease.has(dir)) await copyTree(source, cached);
      else await rename(source, cached);
    }
  }
}

/**
 * `cp -a`: keeps symlinks, modes and owners (reflinks where the file system has them). A copy
 * that fails leaves no partial folder: the next build then installs from scratch, which is
 * slower but right, so the deployment does not fail for it.
 */
async function copyTree(source: string, target: string): Promise<void> {
  const result = await runCommand({ argv: ['cp', '-a', '--reflink=auto', source, target], cwd: '/', env: { PATH: '/usr/bin:/bin' } });
  if (result.exitCode !== 0) await rm(target, { recursive: true, force: true });
}
