import { rename } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Store } from '../store/store.js';
import type { Owner } from '../sandbox/untrusted-tree.js';
import type { BuiltRelease } from './build-phase.js';
import type { DeployLayout } from '../storage/deploy-layout.js';
import type { DeployRunner } from './deploy-runner.js';
import { PhaseError } from '../core/phase-error.js';
import { parseReleaseSpec, type ReleaseSpec } from '../serving/release-spec.js';

/**
 * The release phase of a build: the build folder becomes the release's own folder, named
 * after the deployment, in the app's releases folder (which belongs to the app's user).
 */
export async function releaseBuild(
  runner: DeployRunner,
  layout: DeployLayout,
  input: { appId: string; built: BuiltRelease; user: Owner },
): Promise<ReleaseSpec> {
  const releaseDir = layout.releaseFolder(input.appId, input.built.deploymentId);
  await runner.ownFolder(dirname(releaseDir), input.user);
  await rename(layout.buildFolder(input.appId), releaseDir);
  return { ...input.built, releaseDir };
}

/**
 * A release built earlier, started again by a restart or a rollback: the serving one, or the
 * one `releaseOf` built. It must still be on disk (older ones are pruned).
 */
export function reusedRelease(store: Store, input: { appId: string; deploymentId: string; releaseOf?: string }): ReleaseSpec {
  const json = input.releaseOf ? store.deployments.byId(input.releaseOf)?.release_json : store.deployments.release(input.appId)?.start_json;
  if (!json)
    throw new PhaseError(
      'release',
      'This application has no built release to start.',
      'Deploy it first with `git push` or `slipway deploy`.',
    );
  const release = { ...parseReleaseSpec(json), deploymentId: input.deploymentId };
  if (!existsSync(release.releaseDir)) {
    throw new PhaseError(
      'release',
      `The release built for commit ${release.commit} is no longer kept on disk.`,
      `Redeploy that commit with \`slipway restart --commit ${release.commit}\`, which builds it again.`,
    );
  }
  return release;
}

/** After the switch: the release is the app's serving one, and what its deployment built. */
export function recordServingRelease(store: Store, appId: string, release: ReleaseSpec): void {
  store.deployments.setRelease({
    app_id: appId,
    deployment_id: release.deploymentId,
    release_dir: release.releaseDir,
    start_json: JSON.stringify(release),
    wanted: 'running',
  });
  store.deployments.setReleaseJson(release.deploymentId, JSON.stringify(release));
}
