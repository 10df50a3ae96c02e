/**
 * What a Node.js build's kept folders depend on besides the runtimes' major versions (see
 * BuildPlan.cacheKeyInputs). node_modules is written by one package manager at one version
 * (each records its own layout in it: .modules.yaml, .yarn-integrity, .yarn-state.yml, npm's
 * hidden lockfile), and with or without devDependencies: a change of either starts over, as
 * a change of Node.js major does (native modules are built for one ABI).
 */
import type { ToolRequest } from '../plan.js';
import type { PackageManager } from './detect-package-manager.js';

const MANAGER_TOOL: Record<PackageManager, ToolRequest['name'] | undefined> = {
  npm: 'npm',
  pnpm: 'pnpm',
  yarn1: 'yarn',
  'yarn-berry': 'yarn',
  bun: 'bun',
  // A custom command may use any of them: the toolchain's majors are all the key knows.
  custom: undefined,
};

export function nodeCacheKeyInputs(manager: PackageManager, toolchain: ToolRequest[], installDevDependencies: boolean): string[] {
  const tool = MANAGER_TOOL[manager];
  const version = tool ? toolchain.find((t) => t.name === tool)?.version : undefined;
  return [`${manager}${version ? ` ${version}` : ''}`, installDevDependencies ? 'with devDependencies' : 'without devDependencies'];
}
