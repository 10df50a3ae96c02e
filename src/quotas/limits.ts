import { ValidationError } from '../core/errors.js';
import { flavorNamed } from '../core/flavors.js';
import { parseDiskSize } from '../core/disk-size.js';
import { humanSize } from '../shared/human-size.js';

/**
 * What an organisation may hold at once. Counts are whole numbers (0 refuses every new one);
 * memory is the sum over its apps of instances × the instance flavour's memory.
 */
export interface QuotaLimits {
  apps: number;
  addons: number;
  instances: number;
  memory_bytes: number;
  max_flavor: string;
  workers: number;
  runs: number;
  domains: number;
  /** Cron jobs over the serving releases of all its apps. */
  cron_jobs: number;
  drains: number;
  /** Disk its drains' buffers may take: each drain reserves the daemon's --drain-buffer-size. */
  drain_buffer_bytes: number;
  webhooks: number;
  /** E-mail notifications (`slipway notify-email add`). */
  notify_emails: number;
  /** Backups taken with `slipway addon backup` and kept at once, over all its add-ons. */
  backups: number;
}

export type QuotaName = keyof QuotaLimits;

const GiB = 1024 * 1024 * 1024;

/**
 * The daemon's defaults when the operator gives no `--default-quota`: generous enough for any
 * ordinary tenant (and the platform's own tests), small enough that one organisation cannot ask
 * for the whole machine (the per-app ceiling alone is 40 instances of 16 GiB).
 */
export const DEFAULT_QUOTAS: Readonly<QuotaLimits> = {
  apps: 100,
  addons: 100,
  instances: 200,
  memory_bytes: 256 * GiB,
  max_flavor: 'XL',
  workers: 100,
  runs: 10,
  domains: 200,
  cron_jobs: 50,
  drains: 10,
  drain_buffer_bytes: 256 * 1024 * 1024,
  webhooks: 20,
  notify_emails: 20,
  backups: 20,
};

/** How each quota is spelt on the command line (`--max-flavor`, `max-flavor=M`). */
export const QUOTA_FLAGS: Readonly<Record<QuotaName, string>> = {
  apps: 'apps',
  addons: 'addons',
  instances: 'instances',
  memory_bytes: 'memory',
  max_flavor: 'max-flavor',
  workers: 'workers',
  runs: 'runs',
  domains: 'domains',
  cron_jobs: 'cron-jobs',
  drains: 'drains',
  drain_buffer_bytes: 'drain-buffer',
  webhooks: 'webhooks',
  notify_emails: 'notify-emails',
  backups: 'backups',
};

/** The quotas that are sizes (given as 64G, printed as 64 GiB). */
export const SIZE_QUOTAS: ReadonlySet<QuotaName> = new Set(['memory_bytes', 'drain_buffer_bytes']);

export const QUOTA_NAMES = Object.keys(QUOTA_FLAGS) as QuotaName[];

/** The quota a flag names (`max-flavor`, `max_flavor`, `memory`), or undefined. */
export function quotaNamed(flag: string): QuotaName | undefined {
  const wanted = flag.trim().toLowerCase().replace(/_/g, '-');
  return QUOTA_NAMES.find((name) => QUOTA_FLAGS[name] === wanted);
}

const MAX_COUNT = 1_000_000;

/** One quota's value from text or JSON: a count, a size for memory, a flavour for max-flavor. */
export function parseQuotaValue(name: QuotaName, value: unknown): number | string {
  if (name === 'max_flavor') return flavorNamed(value).name;
  if (SIZE_QUOTAS.has(name)) {
    const what = `the ${QUOTA_FLAGS[name]} quota`;
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
    if (typeof value === 'string') return parseDiskSize(value, what);
    throw new ValidationError(`The ${QUOTA_FLAGS[name]} quota is a size such as 64G, not ${JSON.stringify(value)}.`);
  }
  const n = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_COUNT) {
    throw new ValidationError(
      `The ${QUOTA_FLAGS[name]} quota is a whole number from 0 to ${MAX_COUNT}, not ${JSON.stringify(String(value).slice(0, 40))}.`,
      `For example: slipway org quota set <org> --${QUOTA_FLAGS[name]} 10`,
    );
  }
  return n;
}

/** `--default-quota apps=20,addons=20,memory=64G,max-flavor=M` over the built-in defaults. */
export function parseDefaultQuotas(text: string | undefined): QuotaLimits {
  const limits: QuotaLimits = { ...DEFAULT_QUOTAS };
  for (const part of (text ?? '').split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    const name = eq > 0 ? quotaNamed(part.slice(0, eq)) : undefined;
    if (!name) {
      throw new ValidationError(
        `--default-quota: ${JSON.stringify(part.trim().slice(0, 40))} is not <quota>=<value>.`,
        `Quotas: ${QUOTA_NAMES.map((n) => QUOTA_FLAGS[n]).join(', ')}; e.g. --default-quota apps=20,memory=64G,max-flavor=M`,
      );
    }
    (limits as unknown as Record<string, unknown>)[name] = parseQuotaValue(name, part.slice(eq + 1));
  }
  return limits;
}

/** The limits in force: the organisation's overrides where set, else the defaults. */
export function effectiveLimits(defaults: QuotaLimits, overrides: Partial<Record<QuotaName, number | string | null>>): QuotaLimits {
  const limits: QuotaLimits = { ...defaults };
  for (const name of QUOTA_NAMES) {
    const value = overrides[name];
    if (value !== null && value !== undefined) (limits as unknown as Record<string, unknown>)[name] = value;
  }
  return limits;
}

/** Whether a flavour is at most the biggest one allowed (flavours are ordered by memory). */
export function flavorAllowed(flavor: string, maxFlavor: string): boolean {
  return flavorNamed(flavor).memoryBytes <= flavorNamed(maxFlavor).memoryBytes;
}

/** A quota's value as printed: memory as a size, the rest as they are. */
export function formatQuota(name: QuotaName, value: number | string): string {
  return SIZE_QUOTAS.has(name) && typeof value === 'number' ? humanSize(value) : String(value);
}

/** A quota's field in the API's body: `memory` and `drain_buffer` for the sizes, else the quota's own name. */
export function quotaBodyField(name: QuotaName): string {
  return name === 'memory_bytes' ? 'memory' : name === 'drain_buffer_bytes' ? 'drain_buffer' : name;
}
