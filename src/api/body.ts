import { ValidationError } from '../core/errors.js';

/** Reads a required string field of a JSON body. */
export function requireString(body: Record<string, unknown>, field: string, hint?: string): string {
  const value = body[field];
  if (typeof value !== 'string' || value === '') {
    throw new ValidationError(`Missing field ${JSON.stringify(field)} (a non-empty string).`, hint);
  }
  return value;
}

export function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new ValidationError(`Field ${JSON.stringify(field)} must be a string.`);
  return value;
}

/**
 * A string field the router has checked is a string, refused when empty: the schemas say
 * what type a field is, not that it must not be empty.
 */
export function nonEmpty(field: string, value: string, hint?: string): string {
  if (value === '') throw new ValidationError(`Missing field ${JSON.stringify(field)} (a non-empty string).`, hint);
  return value;
}
