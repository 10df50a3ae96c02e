import { ValidationError } from '../core/errors.js';

export const MAX_INSTANCES = 40;

/** Parses an instance count: a whole number from 1 (0 for a minimum: scale to zero) to MAX_INSTANCES. */
export function checkInstanceCount(value: unknown, options: { zero?: boolean } = {}): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  const lowest = options.zero ? 0 : 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < lowest || n > MAX_INSTANCES) {
    throw new ValidationError(
      `The instance count is a whole number from ${lowest} to ${MAX_INSTANCES}, not ${JSON.stringify(value)}.`,
      options.zero
        ? 'For example: slipway scale --min-instances 0 --max-instances 2 (0: the app sleeps when idle)'
        : 'For example: slipway scale --instances 3',
    );
  }
  return n;
}
