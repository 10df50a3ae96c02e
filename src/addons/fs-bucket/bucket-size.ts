import { ValidationError } from '../../core/errors.js';
import { humanSize } from '../../shared/human-size.js';

/**
 * An FS bucket's plan is its size: `--plan 512M`, `--plan 1G`, `--plan 20G` (binary units: MiB,
 * GiB, TiB; `512MiB` and `512MB` read the same). 1 GiB when left out. The kernel holds the
 * bucket to it (an ext4 filesystem of that size), so it is a size, not a name to look up.
 */
export const DEFAULT_BUCKET_BYTES = 1024 ** 3;
export const MIN_BUCKET_BYTES = 16 * 1024 ** 2;
export const MAX_BUCKET_BYTES = 1024 ** 4;

const UNITS: Record<string, number> = { m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** The size a plan names, in bytes; undefined or empty: the default. */
export function bucketSizeOfPlan(plan: unknown): number {
  if (plan === undefined || plan === null || plan === '') return DEFAULT_BUCKET_BYTES;
  const match = typeof plan === 'string' ? /^\s*([0-9]{1,7})\s*([mgt])(?:i?b)?\s*$/i.exec(plan) : null;
  if (!match) {
    throw new ValidationError(
      `An FS bucket's plan is its size; ${JSON.stringify(String(plan).slice(0, 40))} is not one.`,
      'Give a size such as --plan 512M, --plan 1G or --plan 20G (binary units), or leave --plan out for 1 GiB.',
    );
  }
  const bytes = Number(match[1]) * UNITS[match[2]!.toLowerCase()]!;
  if (bytes < MIN_BUCKET_BYTES || bytes > MAX_BUCKET_BYTES) {
    throw new ValidationError(
      `An FS bucket is ${humanSize(MIN_BUCKET_BYTES)} to ${humanSize(MAX_BUCKET_BYTES)}; ${match[0].trim()} is ${humanSize(bytes)}.`,
      'Choose a size in that range.',
    );
  }
  return bytes;
}
