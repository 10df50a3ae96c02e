import { humanSize } from '../shared/human-size.js';
import { ValidationError } from './errors.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;
const TiB = 1024 * GiB;

/** Each app's disk budget when the operator gives none (`--app-disk-budget`). */
export const DEFAULT_APP_DISK_BUDGET = 2 * GiB;
/** Below this an ext4 filesystem of its own holds little more than its journal. */
export const MIN_APP_DISK_BUDGET = 32 * MiB;
/** Above this the sparse image is almost certainly a typing error. */
export const MAX_APP_DISK_BUDGET = 16 * TiB;

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: KiB,
  kb: KiB,
  kib: KiB,
  m: MiB,
  mb: MiB,
  mib: MiB,
  g: GiB,
  gb: GiB,
  gib: GiB,
  t: TiB,
  tb: TiB,
  tib: TiB,
};

/**
 * Reads a size the way operators type it: `64M`, `2G`, `2GiB`, `512 MiB`, `1.5G`, or bytes.
 * Units are powers of 1024 (a disk budget is counted in the filesystem's own blocks).
 */
export function parseDiskSize(text: string, what = 'disk size'): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(String(text));
  const unit = match ? UNITS[match[2]!.toLowerCase()] : undefined;
  if (!match || unit === undefined) {
    throw new ValidationError(
      `${capitalise(what)} ${JSON.stringify(String(text).slice(0, 40))} is not a size.`,
      'Give a number with a unit, e.g. 512M, 2G or 10GiB (powers of 1024).',
    );
  }
  return Math.round(Number(match[1]) * unit);
}

/** Parses and checks an app's disk budget: from MIN_APP_DISK_BUDGET to MAX_APP_DISK_BUDGET, whole MiB. */
export function parseDiskBudget(text: string): number {
  const bytes = parseDiskSize(text, 'the disk budget');
  if (bytes < MIN_APP_DISK_BUDGET || bytes > MAX_APP_DISK_BUDGET) {
    throw new ValidationError(
      `A disk budget of ${humanSize(bytes)} is outside what slipway accepts (${humanSize(MIN_APP_DISK_BUDGET)} to ${humanSize(MAX_APP_DISK_BUDGET)}).`,
      'For example: slipway scale --disk 4G',
    );
  }
  // The image grows by whole MiB: rounding up never gives less than was asked.
  return Math.ceil(bytes / MiB) * MiB;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** What one app's filesystem holds now. */
export interface DiskUse {
  usedBytes: number;
  budgetBytes: number;
  /** Space still free for the app's writes. */
  freeBytes: number;
}

/**
 * How large a push may be: what is free, less a margin kept for git's own index and refs and
 * for the export of the commit that follows. Never below zero.
 */
export function pushAllowance(use: DiskUse): number {
  const margin = Math.min(8 * MiB, Math.floor(use.budgetBytes / 16));
  return Math.max(0, use.freeBytes - margin);
}

/**
 * Whether a failed build ran out of the budget: a write failed for want of space when less
 * than this is left (a filesystem never fills to the last byte: metadata blocks, the block
 * that did not fit).
 */
export function budgetExhausted(use: DiskUse): boolean {
  return use.freeBytes < Math.max(2 * MiB, use.budgetBytes / 100);
}

/** Kept releases are pruned before a build when less than this share of the budget is free. */
export function spaceIsShort(use: DiskUse): boolean {
  return use.freeBytes < use.budgetBytes / 4;
}

export const SCALE_DISK_HINT =
  'An administrator raises it with `slipway scale --disk <size>` (e.g. `slipway scale --disk 4G`); or make the build write less (fewer dependencies, no large generated files, temporary files removed).';

/** The failed build's message: the budget's exact figure, the words people search for. */
export function budgetExceededMessage(use: DiskUse): string {
  return `disk budget of ${humanSize(use.budgetBytes)} exceeded: the app's repository, build, caches and kept releases use ${humanSize(use.usedBytes)} of it.`;
}

/** The refused push's message, shown by git on the pusher's terminal. */
export function pushTooLargeMessage(use: DiskUse, allowedBytes: number): string[] {
  return [
    `slipway: push refused: it is larger than the ${humanSize(allowedBytes)} left in this app's disk budget of ${humanSize(use.budgetBytes)} (${humanSize(use.usedBytes)} used).`,
    'slipway: nothing of it was kept. An administrator raises the budget with `slipway scale --disk <size>`; or push less (large files belong outside the repository).',
  ];
}
