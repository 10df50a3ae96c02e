/**
 * Exact versions of every tool a Node/Bun plan needs (docs/behaviour.md: Versions), resolved against the catalog
 * of published versions so the plan names exact versions and an impossible request fails the
 * build before anything is fetched.
 *
 * Node:  engines.node > CC_NODE_VERSION > mise.toml node > 24.11.0.
 * npm:   packageManager npm@x > 11.6.1 (older Node: newest npm line that runs on it).
 * Bun:   engines.bun > packageManager bun@x > mise.toml bun > 1.3.1.
 * pnpm:  packageManager pnpm@x > newest in the catalog.
 * Yarn:  always on PATH as the system Yarn: 1.22.22, or the declared yarn@1.x; with Yarn berry
 *        the declared yarn@2+ or the newest 4.x (Versions: pnpm and Yarn).
 * Deno:  mise.toml deno.
 */
import { resolveVersion } from '../../toolchains/resolve-version.js';
import { DEFAULT_BUN_VERSION, DEFAULT_NODE_VERSION, DEFAULT_NPM_VERSION, DEFAULT_YARN1_VERSION } from '../../toolchains/node-releases.js';
import type { ToolName, ToolRequest, VersionCatalog } from '../plan.js';
import type { PackageManager } from './detect-package-manager.js';
import { npmRangeForNode } from './npm-for-node.js';
import { declaredMajor, type DeclaredPackageManager } from './package-manager-field.js';
import type { MiseTools } from './mise.js';

export interface ToolVersionInput {
  manager: PackageManager;
  engines: Record<string, string>;
  declared?: DeclaredPackageManager;
  env: Record<string, string>;
  mise?: MiseTools;
  miseFile?: string;
  catalog: VersionCatalog;
}

export interface ToolVersions {
  toolchain: ToolRequest[];
  notes: string[];
  node: string;
  bun?: string;
}

interface Request {
  request: string;
  reason: string;
}

export async function resolveToolVersions(input: ToolVersionInput): Promise<ToolVersions> {
  const { manager, engines, declared, env, mise, catalog } = input;
  const notes: string[] = [];
  const miseFile = input.miseFile ?? 'mise.toml';
  const cache = new Map<ToolName, string[]>();
  const versions = async (tool: ToolName) => {
    if (!cache.has(tool)) cache.set(tool, await catalog.versions(tool));
    return cache.get(tool)!;
  };
  const resolve = async (tool: ToolName, { request, reason }: Request): Promise<ToolRequest> => ({
    name: tool,
    version: resolveVersion(tool, request, await versions(tool)),
    reason,
  });

  // Node.js
  const ccNodeVersion = env.CC_NODE_VERSION?.trim() || undefined;
  let nodeRequest: Request;
  if (engines.node !== undefined) {
    nodeRequest = { request: engines.node, reason: `engines.node "${engines.node}" in package.json` };
    if (ccNodeVersion) notes.push(`CC_NODE_VERSION=${ccNodeVersion} is not used: engines.node in package.json takes priority over it.`);
  } else if (ccNodeVersion) {
    nodeRequest = { request: ccNodeVersion, reason: `CC_NODE_VERSION=${ccNodeVersion}` };
  } else if (mise?.node) {
    nodeRequest = { request: mise.node, reason: `node = "${mise.node}" in ${miseFile}` };
  } else {
    nodeRequest = { request: DEFAULT_NODE_VERSION, reason: 'default Node.js version' };
  }
  const node = await resolve('node', nodeRequest);
  if (manager === 'bun') node.reason += '; for scripts and tools that call node, Bun runs the app';
  const toolchain: ToolRequest[] = [node];

  // npm: every Node install carries one, as Node's own installers do.
  if (declared?.name === 'npm') {
    toolchain.push(await resolve('npm', { request: declared.version, reason: `"packageManager": "${declared.raw}" in package.json` }));
  } else {
    const line = npmRangeForNode(node.version);
    toolchain.push(
      line.npmRange === DEFAULT_NPM_VERSION
        ? await resolve('npm', {
            request: DEFAULT_NPM_VERSION,
            reason: node.version === DEFAULT_NODE_VERSION ? 'npm shipped with Node.js 24.11.0' : 'default npm version',
          })
        : await resolve('npm', {
            request: line.npmRange,
            reason: `newest npm ${line.npmRange} (npm ${DEFAULT_NPM_VERSION} does not run on Node.js ${node.version})`,
          }),
    );
  }

  // pnpm
  if (manager === 'pnpm') {
    toolchain.push(
      await resolve(
        'pnpm',
        declared?.name === 'pnpm'
          ? { request: declared.version, reason: `"packageManager": "${declared.raw}" in package.json` }
          : { request: 'latest', reason: 'newest pnpm (no "packageManager": "pnpm@<version>" in package.json)' },
      ),
    );
  }

  // Yarn: the system Yarn, or the berry release the app asks for.
  const declaredYarn = declared?.name === 'yarn' ? declared : undefined;
  if (manager === 'yarn-berry') {
    toolchain.push(
      await resolve(
        'yarn',
        declaredYarn && declaredMajor(declaredYarn) >= 2
          ? { request: declaredYarn.version, reason: `"packageManager": "${declaredYarn.raw}" in package.json` }
          : { request: '4.x', reason: 'newest packaged Yarn 4.x (Yarn berry without a "packageManager" version)' },
      ),
    );
  } else {
    toolchain.push(
      await resolve(
        'yarn',
        declaredYarn && declaredMajor(declaredYarn) < 2
          ? { request: declaredYarn.version, reason: `"packageManager": "${declaredYarn.raw}" in package.json` }
          : { request: DEFAULT_YARN1_VERSION, reason: 'system Yarn' },
      ),
    );
  }

  // Bun
  let bun: string | undefined;
  if (manager === 'bun' || mise?.bun) {
    let bunRequest: Request;
    if (engines.bun !== undefined) bunRequest = { request: engines.bun, reason: `engines.bun "${engines.bun}" in package.json` };
    else if (declared?.name === 'bun')
      bunRequest = { request: declared.version, reason: `"packageManager": "${declared.raw}" in package.json` };
    else if (mise?.bun) bunRequest = { request: mise.bun, reason: `bun = "${mise.bun}" in ${miseFile}` };
    else bunRequest = { request: DEFAULT_BUN_VERSION, reason: 'default Bun version' };
    const resolved = await resolve('bun', bunRequest);
    bun = resolved.version;
    toolchain.push(resolved);
  }

  // Deno (only through mise.toml: docs/behaviour.md, Runtimes)
  if (mise?.deno) {
    toolchain.push(await resolve('deno', { request: mise.deno, reason: `deno = "${mise.deno}" in ${miseFile}` }));
  }

  return { toolchain, notes, node: node.version, bun };
}
