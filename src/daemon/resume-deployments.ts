import type { Store } from '../store/store.js';
import type { Deployment } from '../store/deployments.js';
import type { LogHub } from '../logs/log-hub.js';
import type { Deployer } from '../pipeline/deployer.js';

/** Why a deployment the last daemon was running ended. */
export const INTERRUPTED_BY_RESTART =
  'slipway restarted during this deployment: it was cancelled and its build removed; the previous release kept serving. Push again or run `slipway deploy`.';

/**
 * After the apps serve again: the interrupted deployments' logs say why they ended, and the
 * deployments that waited their turn run (a push's or a rebuild's; a restart or a rollback that
 * never started is cancelled instead, since what it was asked for may no longer hold).
 */
export function resumeDeployments(o: {
  store: Store;
  logs: LogHub;
  deployer: Deployer;
  interrupted: Deployment[];
  waiting: Deployment[];
  log: (line: string) => void;
}): void {
  for (const d of o.interrupted) {
    o.logs.append(d.id, 'system', `==> ${INTERRUPTED_BY_RESTART}`);
    o.logs.finish(d.id);
  }
  for (const d of o.waiting) {
    const app = o.store.apps.byId(d.app_id);
    if (app && (d.cause === 'git push' || d.cause === 'rebuild requested')) {
      o.deployer.requeue(app, d, 'build');
      o.log(`Deployment ${d.id} of ${app.name} waited its turn when slipway stopped: it runs now.`);
      continue;
    }
    const reason = 'slipway restarted before this deployment started: ask for it again.';
    o.store.deployments.finish(d.id, 'CANCELLED', reason);
    o.logs.append(d.id, 'system', `==> ${reason}`);
    o.logs.finish(d.id);
  }
}
