import type { BuildPlan, Provider } from '../providers/plan.js';
import { ensureTool, locateTool } from '../toolchains/ensure-tool.js';
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

/** The note that says where a tool of the plan is: the same words in the deploy log and in `slipway plan`. */
function toolNote(tool: string, version: string, binDir: string, installed: boolean): string {
  return `${tool} ${version} runs from ${binDir}${installed ? '' : ' (not yet installed: the build fetches it)'}.`;
}

function filled(plan: BuildPlan, appCacheDir: string, notes: string[]): BuildPlan {
  const fillCommand = <T extends { argv: string[]; env?: Record<string, string> }>(c: T): T => ({
    ...c,
    argv: c.argv.map((a) => fill(a, appCacheDir)),
    env: fillRecord(c.env, appCacheDir),
  });
  return {
    ...plan,
    env: fillRecord(plan.env, appCacheDir)!,
    build: plan.build.map(fillCommand),
    beforeStart: plan.beforeStart.map(fillCommand),
    start: fillCommand(plan.start),
    notes: [...plan.notes, ...notes],
  };
}

/**
 * The plan with the paths a build would use filled in, as prepareToolchain fills them, but
 * without fetching anything: for `slipway plan`. A tool or file not in the cache yet is named
 * at the path the build will put it, and said to be not yet installed.
 */
export async function previewToolchain(
  plan: BuildPlan,
  provider: Pick<Provider, 'preview'>,
  options: { toolchainCacheDir: string; appCacheDir: string },
): Promise<BuildPlan> {
  const notes: string[] = [];
  for (const tool of plan.toolchain) {
    if (!isNpmTool(tool.name)) continue;
    const { install, installed } = await locateTool(options.toolchainCacheDir, tool.name, tool.version);
    notes.push(toolNote(tool.name, tool.version, install.binDir, installed));
  }
  const own = provider.preview ? await provider.preview(plan, options) : plan;
  return filled(own, options.appCacheDir, notes);
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
  const notes: string[] = [];
  for (const tool of plan.toolchain) {
    if (isNpmTool(tool.name)) {
      const install = await ensureTool(options.toolchainCacheDir, tool.name, tool.version, options.log);
      if (!toolPath.includes(install.binDir)) toolPath.push(install.binDir);
      notes.push(toolNote(tool.name, tool.version, install.binDir, true));
    }
  }
  let prepared = plan;
  if (provider.prepare) {
    const own = await provider.prepare(plan, options);
    prepared = own.plan;
    for (const dir of own.toolPath) if (!toolPath.includes(dir)) toolPath.push(dir);
  }
  return { plan: filled(prepared, options.appCacheDir, notes), toolPath };
}
