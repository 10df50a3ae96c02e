/**
 * Shared inputs for the node provider's tests: a fixed catalog of published versions and the
 * example apps' folders, so every plan in the tests is deterministic.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FixedVersionCatalog } from '../../src/toolchains/catalog.js';
import type { BuildPlan } from '../../src/providers/plan.js';
import { makeNodeProvider } from '../../src/providers/node/node-provider.js';

export const EXAMPLES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../examples');

/** A registry URL for tests only: not a real registry. */
export const TEST_DEFAULT_REGISTRY = 'https://npm.registry.invalid/';

export const catalog = new FixedVersionCatalog({
  node: ['20.19.5', '22.11.0', '22.12.0', '22.21.1', '24.10.0', '24.11.0', '24.12.0', '25.2.0', '16.20.2'],
  npm: ['8.19.4', '9.9.4', '10.9.4', '10.9.3', '11.6.1', '11.6.2'],
  pnpm: ['9.15.9', '10.34.9', '10.20.0'],
  yarn: ['1.22.19', '1.22.22', '2.4.3', '3.8.7', '4.9.4', '4.18.1'],
  bun: ['1.2.23', '1.3.0', '1.3.1', '1.3.8'],
  deno: ['1.46.3', '2.5.6', '2.9.6'],
});

export const provider = makeNodeProvider({ defaultRegistry: () => TEST_DEFAULT_REGISTRY });

export function examplePath(name: string): string {
  return path.join(EXAMPLES_DIR, name);
}

export async function exampleEnv(name: string, variant?: number): Promise<Record<string, string>> {
  const meta = JSON.parse(await readFile(path.join(examplePath(name), 'example.json'), 'utf8')) as {
    env?: Record<string, string>;
    variants?: Array<{ env: Record<string, string> }>;
  };
  if (variant === undefined) return { ...(meta.env ?? {}) };
  const chosen = meta.variants?.[variant];
  if (!chosen) throw new Error(`examples/${name}/example.json has no variant ${variant}.`);
  return { ...chosen.env };
}

export async function planFor(sourceDir: string, env: Record<string, string>): Promise<BuildPlan> {
  return provider.plan({ sourceDir, appType: 'node', env, catalog });
}
