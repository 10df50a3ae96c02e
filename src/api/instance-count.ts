import { ValidationError } from '../core/errors.js';

export const MAX_INSTANCES = 40;

/** Parses an instance count: a whole number from 1 to MAX_INSTANCES. */
export function checkInstanceCount(value: unknown): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_INSTANCES) {
    throw new ValidationError(
      `The instance count is a whole number from 1 to ${MAX_INSTANCES}, not ${JSON.stringify(value)}.`,
      'For example: slipway scale --instances 3',
    );
  }
  return n;
}
