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
