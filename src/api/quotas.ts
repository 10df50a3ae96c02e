import type { ApiDependencies } from './platform.js';
import { Quotas } from '../quotas/quotas.js';
import { NotFoundError } from '../core/errors.js';
import type { Org } from '../store/orgs.js';
import type { AppRow } from '../store/apps.js';

const fallback = new WeakMap<ApiDependencies, Quotas>();

/** The daemon's quotas, or (for a server built without them) the built-in defaults, kept per server. */
export function quotasOf(deps: ApiDependencies): Quotas {
  if (deps.quotas) return deps.quotas;
  let quotas = fallback.get(deps);
  if (!quotas) {
    quotas = new Quotas(deps.store);
    fallback.set(deps, quotas);
  }
  return quotas;
}

/** The organisation an application belongs to, whose quotas it counts against. */
export function orgOfApp(deps: ApiDependencies, app: AppRow): Org {
  const org = deps.store.orgs.byId(app.org_id);
  if (!org) throw new NotFoundError("The application's organisation no longer exists.");
  return org;
}
