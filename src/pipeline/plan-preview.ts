import { rm } from 'node:fs/promises';
import type { AppRow } from '../store/apps.js';
import type { BuildPlan, Provider, VersionCatalog } from '../providers/plan.js';
import { PlanError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { describePlan } from '../providers/describe-plan.js';
import { exportCommit } from './commit-export.js';
import type { DeployLayout } from '../storage/deploy-layout.js';
import type { DeployRunner } from './deploy-runner.js';
import { describeRunHooks, withBuildHooks } from './hooks.js';
import { previewToolchain } from './prepare-toolchain.js';
import { makeRedactor, secretValues } from '../core/redact.js';
import type { SandboxPolicy } from '../sandbox/sandbox-identity.js';

export interface PlanPreviewDeps {
  runner: DeployRunner;
  layout: DeployLayout;
  providers: ReadonlyMap<string, Provider>;
  catalog: VersionCatalog;
  toolchainCacheDir: string;
  sandboxes: SandboxPolicy;
  /** The app's bare repository. */
  repoOf(appId: string): string;
  appEnv(appId: string): Record<string, string>;
}

export interface PlanPreview {
  plan: BuildPlan;
  /** The plan as the deploy log prints it, secrets hidden. */
  lines: string[];
  redact(text: string): string;
}

/**
 * The plan a deployment of `commit` would make with the app's variables, as the deploy log
 * prints it, without deploying (`slipway plan`): the commit is exported as the app's user, in its
 * sandbox, into a scratch folder removed afterwards. Paths only the fetched tools give stay as
 * `${…}` tokens. Failures are PlanErrors (what to fix), with no deployment phase.
 */
export async function previewPlan(deps: PlanPreviewDeps, app: AppRow, commit: string): Promise<PlanPreview> {
  const provider = deps.providers.get(app.type);
  if (!provider) throw new PlanError(`No build provider for application type ${app.type}.`);
  const sandbox = await deps.sandboxes.build(app);
  const scratch = { id: newId('deployment'), commit_sha: commit };
  const dir = deps.layout.scratchFolder(app.id, scratch.id);
  await deps.runner.ownFolder(dir, sandbox.user);
  try {
    await exportCommit(deps.runner, {
      repo: deps.repoOf(app.id),
      buildDir: dir,
      deployment: scratch,
      sandbox,
      signal: AbortSignal.timeout(10 * 60_000),
    });
    if (!(await provider.detect(dir))) {
      const help = provider.notDetected();
      throw new PlanError(help.message, help.hint);
    }
    const appVars = deps.appEnv(app.id);
    const made = withBuildHooks(
      await provider.plan({
        sourceDir: dir,
        appType: app.type,
        env: appVars,
        catalog: deps.catalog,
        buildMemoryBytes: sandbox.limits.memoryBytes,
      }),
      appVars,
    );
    // The paths the build would use, as the deploy log prints them, without fetching anything.
    const plan = await previewToolchain(made, provider, {
      toolchainCacheDir: deps.toolchainCacheDir,
      appCacheDir: deps.layout.appCacheFolder(app.id),
    });
    const redact = makeRedactor(secretValues(appVars));
    return { plan, lines: [...describePlan(plan), ...describeRunHooks(appVars)].map(redact), redact };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
