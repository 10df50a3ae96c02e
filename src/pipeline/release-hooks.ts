import type { AppRow } from '../store/apps.js';
import { newId } from '../core/ids.js';
import type { BuildNetworks } from '../network/build-network.js';
import { describeSandboxExit, sandboxIdFor } from '../sandbox/describe.js';
import { releaseSandboxSpec } from '../sandbox/release-sandbox.js';
import type { AppRuntime } from '../serving/app-runtime.js';
import type { DeployRunner } from './deploy-runner.js';
import { hookCommand, type HookName } from './hooks.js';
import { DeploymentCancelled, PhaseError } from '../core/phase-error.js';
import type { ReleaseSpec } from '../serving/release-spec.js';
import type { SandboxPolicy } from '../sandbox/sandbox-identity.js';
import type { DeployLayout } from '../storage/deploy-layout.js';
import { PreRunLayers } from './pre-run-layer.js';

export interface ReleaseHookDeps {
  runner: DeployRunner;
  sandboxes: SandboxPolicy;
  /** Hooks reach the network as builds do: a namespace of their own, outbound only. */
  buildNetworks: BuildNetworks;
  /** The environment an instance of the release gets. */
  runtime: Pick<AppRuntime, 'environmentFor'>;
  /** Where the release's pre-run layer is kept. */
  layout: DeployLayout;
}

/**
 * CC_PRE_RUN_HOOK, once per release: what it writes into the app's folder is captured and kept
 * with the release (pre-run-layer.ts), and the release returned names that layer, for every
 * sandbox started from it. A release whose hook already ran (a restart, a scale-up, a rollback)
 * gets its kept layer without running the hook again; a release without one runs the hook when
 * the app sets it. The hook failing fails the deployment, and nothing of it is kept.
 */
export async function runPreRunHook(
  deps: ReleaseHookDeps,
  input: {
    app: AppRow;
    release: ReleaseSpec;
    appVars: Record<string, string>;
    log: (line: string, stream?: string) => void;
    signal?: AbortSignal;
  },
): Promise<ReleaseSpec> {
  const { app, log } = input;
  const { preRunLayer: _recorded, ...release } = input.release;
  const layers = new PreRunLayers(deps.layout);
  const kept = layers.kept(app.id, release.releaseDir);
  if (kept) {
    log('==> [run] CC_PRE_RUN_HOOK already ran for this release: what it wrote is kept with it, the hook is not run again.');
    return { ...release, preRunLayer: kept };
  }
  if (!hookCommand('CC_PRE_RUN_HOOK', input.appVars)) return release;
  const capture = await layers.startCapture(app.id, release.releaseDir);
  try {
    await runReleaseHook(deps, { ...input, release, name: 'CC_PRE_RUN_HOOK', captureLayer: capture });
  } catch (error) {
    await layers.discard(app.id, release.releaseDir);
    throw error;
  }
  const layer = await layers.keep(app.id, release.releaseDir);
  log('What CC_PRE_RUN_HOOK wrote into the app folder is kept with the release: every instance of it sees it.');
  return { ...release, preRunLayer: layer };
}

/**
 * Runs a run-phase hook once, in a sandbox of the release with the environment an instance
 * gets; nothing when the app does not set it. CC_PRE_RUN_HOOK failing fails the deployment
 * (run phase); the other two only report.
 */
export async function runReleaseHook(
  deps: ReleaseHookDeps,
  input: {
    app: AppRow;
    release: ReleaseSpec;
    name: HookName;
    appVars: Record<string, string>;
    log: (line: string, stream?: string) => void;
    signal?: AbortSignal;
    /** CC_PRE_RUN_HOOK's sandbox: its writes go to this folder, kept (runPreRunHook). */
    captureLayer?: string;
  },
): Promise<void> {
  const { app, release, name, log, signal } = input;
  const command = hookCommand(name, input.appVars);
  if (!command) return;
  const sandbox = await deps.sandboxes.instance(app);
  log(`==> [run] ${name}: ${command.argv.join(' ')}`);
  const network = await deps.buildNetworks.acquireBuildNetwork(app.id);
  try {
    const result = await deps.runner.execute({
      id: sandboxIdFor(release.deploymentId, name.toLowerCase().replaceAll('_', '-')),
      limits: sandbox.limits,
      onLine: (stream, line) => log(line, stream),
      spec: releaseSandboxSpec({
        appId: app.id,
        releaseDir: release.releaseDir,
        preRunLayer: release.preRunLayer,
        captureLayer: input.captureLayer,
        sandbox,
        args: command.argv,
        env: deps.runtime.environmentFor(app, release, newId('instance'), 0, sandbox.limits.memoryBytes),
        hostname: 'hook',
        networkNamespacePath: network.namespacePath,
      }),
      timeoutMs: 30 * 60_000,
      signal,
    });
    if (result.aborted) throw new DeploymentCancelled(String(signal?.reason));
    if (result.exitCode !== 0) {
      if (name === 'CC_PRE_RUN_HOOK')
        throw new PhaseError(
          'run',
          `${name} ${describeSandboxExit(result, sandbox)}; no instance was started.`,
          'Its output is above; fix the hook or the variable, then redeploy.',
        );
      log(`${name} ${describeSandboxExit(result, sandbox)} (the outcome of the deployment stays as it is).`);
    }
  } finally {
    await network.release();
  }
}

/**
 * CC_RUN_SUCCEEDED_HOOK or CC_RUN_FAILED_HOOK once the deployment's outcome is known: they
 * report, and never change it (their own failure is only logged). A deployment that failed
 * before a release existed has nowhere to run CC_RUN_FAILED_HOOK, and says so.
 */
export async function runOutcomeHook(
  deps: ReleaseHookDeps,
  input: {
    app: AppRow;
    release: ReleaseSpec | undefined;
    name: 'CC_RUN_SUCCEEDED_HOOK' | 'CC_RUN_FAILED_HOOK';
    appVars: Record<string, string>;
    log: (line: string, stream?: string) => void;
  },
): Promise<void> {
  const { release, name, log } = input;
  if (!hookCommand(name, input.appVars)) return;
  if (!release) return log(`${name} was not run: the deployment failed before a release existed.`);
  await runReleaseHook(deps, { ...input, release }).catch((e) => log(`${name}: ${(e as Error).message}`));
}
