import type { BuildPlan, PlanCommand } from '../providers/plan.js';

/**
 * The reference service's deployment hooks: commands an app sets as variables, run by bash in
 * the sandbox of the phase they belong to.
 * - CC_PRE_BUILD_HOOK: before the dependencies are installed (first build step);
 * - CC_POST_BUILD_HOOK: after the build (the usual place for `npm run build`);
 * - CC_PRE_RUN_HOOK: once per release, before its first instance starts, in the release; what
 *   it writes into the app's folder is kept with the release (pre-run-layer.ts);
 * - CC_RUN_SUCCEEDED_HOOK / CC_RUN_FAILED_HOOK: after the deployment ended, with its outcome;
 *   they never change it.
 */
export const HOOKS = ['CC_PRE_BUILD_HOOK', 'CC_POST_BUILD_HOOK', 'CC_PRE_RUN_HOOK', 'CC_RUN_SUCCEEDED_HOOK', 'CC_RUN_FAILED_HOOK'] as const;
export type HookName = (typeof HOOKS)[number];

/** The argv of a hook: the variable's value is a bash script, as on the reference service. */
export function hookCommand(name: HookName, appVars: Record<string, string>): PlanCommand | undefined {
  const script = appVars[name];
  if (script === undefined || script.trim() === '') return undefined;
  return { label: name, argv: ['bash', '-c', script] };
}

/** The build hooks become the plan's first and last build steps, so the printed plan shows them. */
export function withBuildHooks(plan: BuildPlan, appVars: Record<string, string>): BuildPlan {
  const pre = hookCommand('CC_PRE_BUILD_HOOK', appVars);
  const post = hookCommand('CC_POST_BUILD_HOOK', appVars);
  return { ...plan, build: [...(pre ? [pre] : []), ...plan.build, ...(post ? [post] : [])] };
}

/** The hooks of the run phase, printed with the plan. */
export function describeRunHooks(appVars: Record<string, string>): string[] {
  return (['CC_PRE_RUN_HOOK', 'CC_RUN_SUCCEEDED_HOOK', 'CC_RUN_FAILED_HOOK'] as const)
    .filter((name) => hookCommand(name, appVars))
    .map((name) => `${name}: bash -c ${JSON.stringify(appVars[name])}`);
}
