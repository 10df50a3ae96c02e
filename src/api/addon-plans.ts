import { ValidationError } from '../core/errors.js';
import { bucketSizeOfPlan } from '../addons/fs-bucket/bucket-size.js';

/**
 * The reference service names its providers `postgresql-addon` and `redis-addon`; scripts
 * written for it work here unchanged.
 */
const PROVIDER_ALIASES: Record<string, string> = {
  'postgresql-addon': 'postgresql',
  'redis-addon': 'redis',
};

/**
 * Each provider has one plan: an add-on on the provider's shared server. The names are those of
 * the reference service's smallest plans, so `--plan dev` or `--plan s_mono` keep working.
 */
const PLANS: Record<string, { name: string; description: string }> = {
  postgresql: { name: 'dev', description: 'a PostgreSQL server of its own, sized by the plan' },
  redis: { name: 's_mono', description: 'one Redis server process of its own, with a password' },
  'fs-bucket': { name: '1G', description: 'a filesystem of its own; the plan is its size (--plan 512M, 20G...)' },
};

/** The provider name a user typed, with the reference service's names accepted. */
export function canonicalProviderName(name: string): string {
  return PROVIDER_ALIASES[name.toLowerCase()] ?? name;
}

export function planOf(provider: string): { name: string; description: string } | undefined {
  return PLANS[provider];
}

/**
 * Accepts the provider's one plan (any case) or none; anything else is refused with the plan that
 * exists. An FS bucket's plan is its size, any in its range.
 */
export function checkPlan(provider: string, plan: unknown): void {
  if (plan === undefined || plan === null) return;
  if (provider === 'fs-bucket') {
    bucketSizeOfPlan(plan); // an FS bucket's plan is a size
    return;
  }
  const only = PLANS[provider];
  if (typeof plan === 'string' && only && plan.toLowerCase() === only.name.toLowerCase()) return;
  throw new ValidationError(
    `The ${provider} provider has no plan ${JSON.stringify(String(plan).slice(0, 40))}.`,
    only ? `It has one plan, ${only.name} (${only.description}); leave --plan out or give --plan ${only.name}.` : 'Leave --plan out.',
  );
}
