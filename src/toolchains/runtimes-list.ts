/**
 * Data for `slipway runtimes`: the Node.js and Bun versions a build can ask for, newest first,
 * with end-of-life ones marked (docs/behaviour.md, Versions).
 */
import semver from 'semver';
import type { VersionCatalog } from './tools.js';
import { DEFAULT_BUN_VERSION, DEFAULT_NODE_VERSION, isEndOfLife } from './node-releases.js';

export interface RuntimeVersion {
  runtime: 'node' | 'bun';
  version: string;
  endOfLife: boolean;
  isDefault: boolean;
}

export async function listRuntimes(catalog: VersionCatalog, today: Date = new Date()): Promise<RuntimeVersion[]> {
  const [node, bun] = await Promise.all([catalog.versions('node'), catalog.versions('bun')]);
  const rows = (runtime: 'node' | 'bun', versions: string[], defaultVersion: string): RuntimeVersion[] =>
    semver.rsort(versions.filter((v) => semver.valid(v) !== null)).map((version) => ({
      runtime,
      version,
      endOfLife: isEndOfLife(runtime, version, today, bun),
      isDefault: version === defaultVersion,
    }));
  return [...rows('node', node, DEFAULT_NODE_VERSION), ...rows('bun', bun, DEFAULT_BUN_VERSION)];
}
