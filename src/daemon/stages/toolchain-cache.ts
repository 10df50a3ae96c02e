import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { NpmVersionCatalog } from '../../toolchains/catalog.js';
import type { DaemonBase } from './stage.js';

/**
 * The shared toolchain cache (Node, npm, Bun, sbt...), perhaps shared by several daemons, and
 * the version lists kept in it. Needs: the base. Provides: `catalog`.
 */
export function toolchainCache({ options }: DaemonBase) {
  mkdirSync(options.toolchainCacheDir, { recursive: true, mode: 0o755 });
  // The build user runs the cached tools: the cache folder must be open to it.
  chmodSync(options.toolchainCacheDir, 0o755);
  return { catalog: new NpmVersionCatalog(join(options.toolchainCacheDir, 'catalog')) };
}
