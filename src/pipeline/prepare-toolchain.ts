import { join } from 'node:path';
import type { BuildPlan } from '../providers/plan.js';
import { ensureTool } from '../toolchains/ensure-tool.js';
import { isNpmTool } from '../toolchains/tool-packages.js';
import { prepareSbtPlan } from '../providers/sbt/prepare.js';

/** Token a plan uses for the app's own cache folder, kept between its builds. */
export const APP_CACHE_TOKEN = '${SLIPWAY_APP_CACHE}';

function fill(value: string, appCacheDir: string): string {
  return value.split(APP_CACHE_TOKEN).join(appCacheDir);
}

function fillRecord(record: Record<string, string> | undefined, appCacheDir: string): Record<string, string> | undefined {
  if (!record) return record;
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, fill(v, appCacheDir)]));
}

/**
 * Fetches every tool of the plan into the shared cache and makes its commands runnable:
 * returns the plan with cache tokens filled and the bin folders to put first on PATH.
 */
export async function prepareToolchain(
  plan: BuildPlan,
  options: { toolchainCacheDir: string; appCacheDir: string; log(line: string): void },
): Promise<{ plan: BuildPlan; toolPath: string[] }> {
  const toolPath: string[] = [];
  for (const tool of plan.toolchain) {
    if (isNpmTool(tool.name)) {
      const install = await ensureTool(options.toolchainCacheDir, tool.name, tool.version, options.log);
      if (!toolPath.includes(install.binDir)) toolPath.push(install.binDir);
    }
  }
  let prepared = plan;
  if (plan.provider === 'sbt') {
    prepared = await prepareSbtPlan(plan, { toolchainCacheDir: options.toolchainCacheDir, appCacheDir: options.appCacheDir, log: options.log });
    if (plan.env.JAVA_HOME) toolPath.push(join(plan.env.JAVA_HOME, 'bin'));
  }
  const dir = options.appCacheDir;
  const fillCommand = <T extends { argv: string[]; env?: Record<string, string> }>(c: T): T => ({
    ...c,
    argv: c.argv.map((a) => fill(a, dir)),
    env: fillRecord(c.env, dir),
  });
  return {
    plan: {
      ...prepared,
      env: fillRecord(prepared.env, dir)!,
      build: prepared.build.map(fillCommand),
      beforeStart: prepared.beforeStart.map(fillCommand),
      start: fillCommand(prepared.start),
    },
    toolPath,
  };
}
