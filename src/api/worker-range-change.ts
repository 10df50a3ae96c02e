import { ValidationError } from '../core/errors.js';
import { type ScalingColumns, type WorkerRange, workerRangeOf } from '../core/scaling-ranges.js';
import { MAX_INSTANCES } from './instance-count.js';

/** The fields of `PUT /v1/apps/:app/scale` that touch the app's worker instances. */
export interface WorkerFields {
  workers?: unknown;
  minWorkers?: unknown;
  maxWorkers?: unknown;
}

/** What `--workers` takes to go back to workers beside each instance. */
export const WORKERS_BESIDE = 'default';

const EXAMPLE = 'For example: slipway scale --min-workers 1 --max-workers 3, --workers 2, or --workers default (beside each instance)';

function count(what: string, value: unknown): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_INSTANCES) {
    throw new ValidationError(`${what} is a whole number from 1 to ${MAX_INSTANCES}, not ${JSON.stringify(value)}.`, EXAMPLE);
  }
  return n;
}

/**
 * The app's range of worker instances after a scale request: `range` null goes back to workers
 * beside each instance (`--workers default`); undefined when the request touches none. `workers`
 * is a fixed count (min = max); a bound given alone keeps the other (a first range starts from
 * 1 worker instance); the count now moves inside the new range.
 */
export function workerRangeChange(app: ScalingColumns, body: WorkerFields): { range: WorkerRange | null } | undefined {
  if (body.workers === undefined && body.minWorkers === undefined && body.maxWorkers === undefined) return undefined;
  if (typeof body.workers === 'string' && body.workers.trim().toLowerCase() === WORKERS_BESIDE) {
    if (body.minWorkers !== undefined || body.maxWorkers !== undefined) {
      throw new ValidationError(
        '--workers default drops the range of workers; it cannot be given with --min-workers or --max-workers.',
        EXAMPLE,
      );
    }
    return { range: null };
  }
  const before = workerRangeOf(app);
  const fixed = body.workers === undefined ? undefined : count('The number of worker instances', body.workers);
  const min = body.minWorkers === undefined ? (fixed ?? before?.min ?? 1) : count('The fewest worker instances', body.minWorkers);
  const max =
    body.maxWorkers === undefined ? (fixed ?? Math.max(min, before?.max ?? min)) : count('The most worker instances', body.maxWorkers);
  if (fixed !== undefined && (min !== fixed || max !== fixed)) {
    throw new ValidationError(
      '--workers sets a fixed count of worker instances; it cannot be given with a different --min-workers or --max-workers.',
      EXAMPLE,
    );
  }
  if (min > max) throw new ValidationError(`The minimum of worker instances (${min}) is over the maximum (${max}).`, EXAMPLE);
  return { range: { min, max, count: Math.min(max, Math.max(min, before?.count ?? min)) } };
}
