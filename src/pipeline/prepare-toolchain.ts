import type { BuildPlan, Provider } from '../providers/plan.js';
import { ensureTool } from '../toolchains/ensure-tool.js';
import { isNpmTool } from '../toolchains/tool-packages.js';

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
 * Fetches every tool of the plan into the shared cache and makes its commands runnable (the
 * provider's own preparation included): returns the plan with every token filled, as it will
 * run, and the bin folders to put first on PATH.
 */
export async function prepareToolchain(
  plan: BuildPlan,
  provider: Pick<Provider, 'prepare'>,
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
  if (provider.prepare) {
    const own = await provider.prepare(plan, options);
    prepared = own.plan;
    for (const dir of own.toolPath) if (!toolPath.includes(dir)) toolPath.push(dir);
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
