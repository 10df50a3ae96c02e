import type { Store } from '../store/store.js';
import type { AppRow } from '../store/apps.js';
import type { Deployer } from '../pipeline/deployer.js';

export interface ConsumerRedeploy {
  app_id: string;
  app_name: string;
  deployment_id: string;
}

/**
 * An app's exposed configuration changed: restart (same release, fresh variables, health
 * checked) every app linked to it that is deployed and meant to run. Apps never deployed or
 * stopped on purpose get the new values at their next deployment.
 */
export function redeployConsumers(store: Store, deployer: Deployer, target: AppRow, userId: string | null): ConsumerRedeploy[] {
  const queued: ConsumerRedeploy[] = [];
  for (const consumer of store.links.consumersOf(target.id)) {
    const release = store.deployments.release(consumer.id);
    if (release?.wanted !== 'running') continue;
    const built = store.deployments.byId(release.deployment_id);
    if (!built) continue;
    const deployment = deployer.enqueue(consumer, {
      commit: built.commit_sha,
      cause: `exposed configuration of ${target.name} changed`,
      userId,
      mode: 'reuse-release',
    });
    queued.push({ app_id: consumer.id, app_name: consumer.name, deployment_id: deployment.id });
  }
  return queued;
}
