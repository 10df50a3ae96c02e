import type { Store } from '../store/store.js';
import type { AppRow } from '../store/apps.js';
import type { Instance } from '../instances/backend.js';
import type { LogHub } from '../logs/log-hub.js';
import { AUTOSCALING_CAUSE } from '../core/scaling-ranges.js';

export interface DecisionToApply {
  store: Store;
  logs: LogHub;
  app: AppRow;
  /** What the decision says ("1 → 2 instances: CPU 97% of 1 instance for 6 s"). */
  line: string;
  /** The instances that serve now: the record names their release's commit. */
  serving: readonly Instance[];
  /** Stores the count decided, then the count that runs when the change failed. */
  setCount(count: number): void;
  /** Brings what runs to the stored count. */
  scale(log: (line: string) => void): Promise<void>;
  /** How many run now, after a failed change. */
  runningCount(): number;
}

/**
 * Applies an autoscaling decision (instances or worker instances) as a record of the app's
 * activity with its own log: the count stored, the change made, its outcome written. Resolves
 * with the outcome, or undefined when the app was deleted meanwhile (its records went with it).
 */
export async function applyDecision(a: DecisionToApply, to: number): Promise<'done' | 'failed' | undefined> {
  const { store, logs, app, line } = a;
  const commit = store.deployments.byId(a.serving[0]?.spec.deploymentId ?? '')?.commit_sha ?? '';
  const record = store.deployments.create({ appId: app.id, commit, cause: AUTOSCALING_CAUSE, userId: null });
  store.deployments.setPhase(record.id, 'run');
  const log = (text: string) => {
    logs.append(record.id, 'system', text);
    logs.append(app.id, 'system', text);
  };
  log(`Autoscaling: ${line}`);
  a.setCount(to);
  let outcome: 'done' | 'failed' = 'done';
  let message = line;
  try {
    await a.scale(log);
  } catch (error) {
    outcome = 'failed';
    // The count is what runs: the next decision starts from there.
    if (store.apps.byId(app.id)) a.setCount(Math.max(1, a.runningCount()));
    message = `${line} — failed: ${(error as Error).message}`;
    log(`Autoscaling failed: ${(error as Error).message}`);
  }
  logs.finish(record.id);
  if (!store.apps.byId(app.id)) return undefined;
  store.deployments.setPhase(record.id, 'done');
  store.deployments.finish(record.id, outcome === 'done' ? 'OK' : 'FAIL', message);
  return outcome;
}
