/**
 * The one place that decides which names are acceptable. Every name that reaches a path,
 * a command, a host name or SQL passes through here first.
 */
import { ValidationError } from './errors.js';

export const REGIONS = ['par', 'mtl'] as const;
export type Region = (typeof REGIONS)[number];

const APP_ID = /^app_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ANY_ID = /^[a-z]+_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Display names: letters, digits, spaces and a few separators; no control characters. */
const DISPLAY_NAME = /^[\p{L}\p{N}][\p{L}\p{N} ._-]{0,62}$/u;
/** Short handles used on the command line and in URLs. */
const HANDLE = /^[a-z0-9][a-z0-9-]{0,62}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ENV_NAME_JAVA = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const MAX_ENV_VALUE = 256 * 1024;

export function isAppId(value: string): boolean {
  return APP_ID.test(value);
}

export function isId(value: string): boolean {
  return ANY_ID.test(value);
}

/**
 * An application type among `types`: the providers' list (src/providers/registry.ts), passed in
 * because the runtimes are the providers' to name, not core's.
 */
export function checkAppType(value: unknown, types: ReadonlyArray<{ name: string; label: string }>): string {
  const known = types.find((t) => t.name === value);
  if (typeof value !== 'string' || !known) {
    throw new ValidationError(
      `Unknown application type ${JSON.stringify(value)}.`,
      `Valid types: ${types.map((t) => `${t.name} (${t.label})`).join(', ')}.`,
    );
  }
  return known.name;
}

export function checkRegion(value: unknown): Region {
  if (typeof value !== 'string' || !(REGIONS as readonly string[]).includes(value)) {
    throw new ValidationError(`Unknown region ${JSON.stringify(value)}.`, `Valid regions: par (Paris), mtl (Montreal).`);
  }
  return value as Region;
}

export function checkDisplayName(kind: string, value: unknown): string {
  if (typeof value !== 'string' || !DISPLAY_NAME.test(value)) {
    throw new ValidationError(
      `Invalid ${kind} name ${JSON.stringify(value)}.`,
      `A ${kind} name is 1 to 63 characters: letters, digits, spaces, '.', '_' or '-', starting with a letter or digit.`,
    );
  }
  return value;
}

export function checkHandle(kind: string, value: unknown): string {
  if (typeof value !== 'string' || !HANDLE.test(value)) {
    throw new ValidationError(
      `Invalid ${kind} ${JSON.stringify(value)}.`,
      `A ${kind} is 1 to 63 characters of lower-case letters, digits and '-', starting with a letter or digit.`,
    );
  }
  return value;
}

/**
 * Variable names follow the reference service: letters, digits (not first) and `_`;
 * Java (sbt) applications also accept `-` and `.` because system properties use them.
 */
export function checkEnvName(name: unknown, appType: string): string {
  const java = appType === 'sbt';
  const pattern = java ? ENV_NAME_JAVA : ENV_NAME;
  if (typeof name !== 'string' || name.length === 0 || name.length > 255 || !pattern.test(name)) {
    throw new ValidationError(
      `Invalid variable name ${JSON.stringify(name)}.`,
      java
        ? 'Variable names use letters, digits, `_`, `-` and `.`, and do not start with a digit.'
        : 'Variable names use letters, digits and `_`, and do not start with a digit (e.g. MY_SETTING).',
    );
  }
  return name;
}

export function checkEnvValue(name: string, value: unknown): string {
  if (typeof value !== 'string') {
    throw new ValidationError(`The value of ${name} must be a string.`);
  }
  if (value.includes('\0')) {
    throw new ValidationError(`The value of ${name} contains a NUL character, which no process environment can hold.`);
  }
  if (value.length > MAX_ENV_VALUE) {
    throw new ValidationError(`The value of ${name} is ${value.length} characters long; the limit is ${MAX_ENV_VALUE}.`);
  }
  return value;
}

/** Git refs a push may name; only `master` deploys, but others are checked before they are named in messages. */
export function checkBranchName(value: unknown): string {
  if (typeof value !== 'string' || !/^[A-Za-z0-9._/-]{1,200}$/.test(value) || value.includes('..') || value.startsWith('-')) {
    throw new ValidationError(`Invalid branch name ${JSON.stringify(value)}.`);
  }
  return value;
}

/**
 * A path inside a build folder given by the user (CC_SBT_TARGET_DIR, APP_FOLDER...):
 * relative, no `..` segment, no control characters.
 */
export function checkRelativePath(kind: string, value: string): string {
  const segments = value.split('/').filter((s) => s !== '' && s !== '.');
  if (value.startsWith('/') || segments.some((s) => s === '..') || /[\0-\x1f]/.test(value)) {
    throw new ValidationError(
      `${kind} ${JSON.stringify(value)} points outside the build folder.`,
      `Use a path relative to the repository root, without '..' (e.g. "web").`,
    );
  }
  return segments.join('/');
}
