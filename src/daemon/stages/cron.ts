import type { LogHub } from '../../logs/log-hub.js';
import { startOneOff } from '../../pipeline/one-off.js';
import { OneOffRuns } from '../../pipeline/one-off-runs.js';
import type { Store } from '../../store/store.js';
import { makeCronScheduler } from '../cron-setup.js';
import type { DaemonBase, NetworkBuilt, SandboxesBuilt, Told } from './stage.js';
import type { serving } from './serving.js';

/**
 * One-off commands (`slipway run` and cron runs) and the cron scheduler running each app's jobs
 * once per schedule, in one-off sandboxes of its release (docs/behaviour.md, Cron jobs); begun
 * by the resume stage. Needs: `store`, `logs`, `told`, the serving stage's `runtime`, `policy`
 * and `appEnv`, the sandboxes' `sandboxes` and `backend`, the network's `instances`. Provides:
 * `oneOffRuns` (every one-off command by app: an app's deletion ends them), `oneOffs`, `cron`.
 */
export function cron(
  needs: DaemonBase &
    Pick<ReturnType<typeof serving>, 'runtime' | 'policy' | 'appEnv'> &
    Pick<SandboxesBuilt, 'sandboxes' | 'backend'> &
    Pick<NetworkBuilt, 'instances'> & { store: Store; logs: LogHub; told: Told },
) {
  const { store, logs, told, runtime, policy, appEnv, sandboxes, backend, instances, stoppers, log } = needs;
  const oneOffRuns = new OneOffRuns();
  const oneOffs = { store, runtime, sandboxes: policy, sandboxHost: sandboxes, networks: backend, instances, runs: oneOffRuns };
  const cron = makeCronScheduler({
    store,
    events: told.events,
    appVars: appEnv,
    appLog: (appId, stream, line) => logs.append(appId, stream, line),
    runOneOff: (app, argv, onData) => startOneOff(oneOffs, app, argv, onData),
    log,
  });
  stoppers.control('cron jobs', () => cron.stop());
  return { oneOffRuns, oneOffs, cron };
}
