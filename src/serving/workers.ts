import type { WorkerSpec } from '../instances/backend.js';
import { PlanError } from '../core/errors.js';

const POLICIES = ['always', 'on-failure', 'no'] as const;

/**
 * The workers an app asks for, as the reference service reads them: CC_WORKER_COMMAND and
 * CC_WORKER_COMMAND_<n> (run by bash), supervised per CC_WORKER_RESTART (always, on-failure —
 * the default — or no) after CC_WORKER_RESTART_DELAY seconds (default 1).
 */
export function workersFrom(appVars: Record<string, string>): WorkerSpec[] {
  const policy = appVars.CC_WORKER_RESTART?.trim() || 'on-failure';
  if (!(POLICIES as readonly string[]).includes(policy)) {
    throw new PlanError(
      `CC_WORKER_RESTART must be always, on-failure or no, not ${JSON.stringify(policy)}.`,
      'Fix it with `slipway env set CC_WORKER_RESTART on-failure`.',
    );
  }
  const delayText = appVars.CC_WORKER_RESTART_DELAY?.trim() || '1';
  const delay = Number(delayText);
  if (!/^\d+(\.\d+)?$/.test(delayText) || delay > 3600) {
    throw new PlanError(
      `CC_WORKER_RESTART_DELAY is a number of seconds (0 to 3600), not ${JSON.stringify(delayText)}.`,
      'For example: slipway env set CC_WORKER_RESTART_DELAY 5',
    );
  }
  return Object.entries(appVars)
    .filter(([name, value]) => /^CC_WORKER_COMMAND(_\d+)?$/.test(name) && value.trim() !== '')
    .sort(([a], [b]) => order(a) - order(b))
    .map(([name, value]) => ({
      name: name === 'CC_WORKER_COMMAND' ? 'worker' : `worker-${name.slice('CC_WORKER_COMMAND_'.length)}`,
      command: ['bash', '-c', value],
      restart: policy as WorkerSpec['restart'],
      restartDelayMs: Math.round(delay * 1000),
    }));
}

function order(name: string): number {
  return name === 'CC_WORKER_COMMAND' ? -1 : Number(name.slice('CC_WORKER_COMMAND_'.length));
}
