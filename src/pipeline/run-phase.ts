import type { AppRow } from '../store/apps.js';
import type { Instance } from '../instances/backend.js';
import type { AppRuntime } from '../serving/app-runtime.js';
import { DeploymentCancelled } from '../core/phase-error.js';
import { type ReleaseHookDeps, runPreRunHook } from './release-hooks.js';
import type { ReleaseSpec } from '../serving/release-spec.js';

/**
 * The run phase: CC_PRE_RUN_HOOK once per release (what it wrote kept with the release:
 * `onRelease` gets the release naming that layer, before any instance starts), then every
 * instance of the release, not yet routed (the health check and the switch come next). A
 * cancellation stops what was started.
 */
export async function startRelease(
  deps: ReleaseHookDeps & { runtime: Pick<AppRuntime, 'launchAll'> },
  input: {
    app: AppRow;
    release: ReleaseSpec;
    appVars: Record<string, string>;
    log(line: string, stream?: string): void;
    signal: AbortSignal;
    onRelease(release: ReleaseSpec): void;
  },
): Promise<Instance[]> {
  const { app, log, signal } = input;
  const release = await runPreRunHook(deps, input);
  input.onRelease(release);
  if (signal.aborted) throw new DeploymentCancelled(String(signal.reason));
  const instances = await deps.runtime.launchAll(app, release, (line) => log(line), signal);
  if (signal.aborted) {
    await Promise.all(instances.map((i) => i.stop(5000).catch(() => undefined)));
    throw new DeploymentCancelled(String(signal.reason));
  }
  return instances;
}
