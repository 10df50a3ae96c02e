/**
 * Version catalogs: which exact versions of a tool exist, to resolve ranges against.
 * The npm catalog asks the registry npm is configured with, and keeps the answer on disk for
 * a while so that a burst of builds does not query the registry each time.
 */
import { mkdir, readFile, rename, writeFile, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import semver from 'semver';
import type { ToolName, VersionCatalog } from './tools.js';
import { runNpm } from './npm-cli.js';
import { catalogPackagesForTool, isNpmTool, NPM_TOOLS } from './tool-packages.js';

const DEFAULT_TTL_MS = 60 * 60 * 1000;

/** Plain `major.minor.patch` versions only: prereleases and build tags are not offered. */
export function plainVersions(versions: readonly string[]): string[] {
  const plain = new Set<string>();
  for (const v of versions) {
    const parsed = semver.parse(v);
    if (parsed && parsed.prerelease.length === 0 && parsed.build.length === 0) plain.add(parsed.version);
  }
  return semver.sort([...plain]);
}

interface CachedList {
  package: string;
  fetchedAt: number;
  versions: string[];
}

/** Catalog backed by `npm view <package> versions --json`, cached in `<cacheDir>/_catalog/`. */
export class NpmVersionCatalog implements VersionCatalog {
  private readonly ttlMs: number;
  private readonly folder: string;
  /** Requests in flight, so concurrent callers share one npm run. */
  private readonly pending = new Map<string, Promise<string[]>>();

  constructor(cacheDir: string, options: { ttlMs?: number } = {}) {
    this.ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    this.folder = join(cacheDir, '_catalog');
  }

  async versions(tool: ToolName): Promise<string[]> {
    if (!isNpmTool(tool)) {
      throw new Error(
        `NpmVersionCatalog lists ${NPM_TOOLS.join(', ')} from the npm registry; "${tool}" versions come from the JDKs installed ` +
          `on the machine (java) or Maven Central (sbt), so the caller must use a catalog for those.`,
      );
    }
    const lists = await Promise.all(
      catalogPackagesForTool(tool).map(async ({ name, range }) =>
        (await this.packageVersions(name)).filter((v) => semver.satisfies(v, range)),
      ),
    );
    return semver.sort([...new Set(lists.flat())]);
  }

  /** Plain versions of one npm package, from the disk cache when fresh enough. */
  private packageVersions(name: string): Promise<string[]> {
    let request = this.pending.get(name);
    if (!request) {
      request = this.loadPackageVersions(name).finally(() => this.pending.delete(name));
      this.pending.set(name, request);
    }
    return request;
  }

  private cacheFile(name: string): string {
    return join(this.folder, `${name.replace(/^@/, '').replace(/\//g, '__')}.json`);
  }

  private async readCache(name: string): Promise<CachedList | undefined> {
    try {
      const cached = JSON.parse(await readFile(this.cacheFile(name), 'utf8')) as CachedList;
      if (cached.package === name && Array.isArray(cached.versions) && typeof cached.fetchedAt === 'number') return cached;
    } catch {
      // Missing or damaged cache: fetch again.
    }
    return undefined;
  }

  private async loadPackageVersions(name: string): Promise<string[]> {
    const cached = await this.readCache(name);
    if (cached && Date.now() - cached.fetchedAt < this.ttlMs) return cached.versions;
    await mkdir(this.folder, { recursive: true, mode: 0o755 });
    let raw: string;
    try {
      raw = await runNpm(['view', name, 'versions', '--json'], { cwd: this.folder, timeoutMs: 60_000 });
    } catch (error) {
      // A registry hiccup must not fail builds that an older answer can serve.
      if (cached) return cached.versions;
      throw new Error(
        `Could not list the versions of ${name} from the npm registry: ${(error as Error).message}\n` +
          'Check the registry npm uses (`npm config get registry`) and that this machine reaches it.',
      );
    }
    const parsed: unknown = JSON.parse(raw);
    // `npm view` prints a bare string instead of an array when a package has a single version.
    const all = Array.isArray(parsed) ? parsed.map(String) : [String(parsed)];
    const versions = plainVersions(all);
    await this.writeCache({ package: name, fetchedAt: Date.now(), versions });
    return versions;
  }

  /** Temp file + rename, so a concurrent reader never sees half a file. */
  private async writeCache(entry: CachedList): Promise<void> {
    const file = this.cacheFile(entry.package);
    const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    await writeFile(temp, JSON.stringify(entry), { mode: 0o644 });
    await chmod(temp, 0o644);
    await rename(temp, file);
  }
}

/** Catalog with fixed lists, for tests of code that resolves versions. */
export class FixedVersionCatalog implements VersionCatalog {
  constructor(private readonly lists: Partial<Record<ToolName, string[]>>) {}

  async versions(tool: ToolName): Promise<string[]> {
    return [...(this.lists[tool] ?? [])];
  }
}
