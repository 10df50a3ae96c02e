import { ValidationError } from '../core/errors.js';

/**
 * A string field the router has checked is a string, refused when empty: the schemas say
 * what type a field is, not that it must not be empty.
 */
export function nonEmpty(field: string, value: string, hint?: string): string {
  if (value === '') throw new ValidationError(`Missing field ${JSON.stringify(field)} (a non-empty string).`, hint);
  return value;
}
