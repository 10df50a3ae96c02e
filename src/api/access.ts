import type { Store } from '../store/store.js';
import type { User } from '../store/users.js';
import type { AppRow } from '../store/apps.js';
import type { Org } from '../store/orgs.js';
import { ForbiddenError, NotFoundError, ValidationError } from '../core/errors.js';
import { isAppId, isId } from '../core/names.js';

/**
 * Access rules: a user sees only the organisations they belong to. Anything else
 * answers "not found", so nobody learns that another organisation's app exists.
 */
export function orgForUser(store: Store, user: User, ref: unknown): Org {
  if (typeof ref !== 'string' || ref === '') {
    throw new ValidationError('No organisation given.', 'Pass --org <org id or name>; `slipway org list` shows yours.');
  }
  const org = isId(ref) ? store.orgs.byId(ref) : store.orgs.byName(ref);
  if (!org || !store.orgs.isMember(org.id, user.id)) {
    throw new NotFoundError(
      `No organisation ${JSON.stringify(ref)} among yours.`,
      '`slipway org list` shows the organisations you belong to.',
    );
  }
  return org;
}

export function appForUser(store: Store, user: User, appId: string): AppRow {
  const app = isAppId(appId) ? store.apps.byId(appId) : undefined;
  if (!app || !store.orgs.isMember(app.org_id, user.id)) {
    throw new NotFoundError(
      `No application ${JSON.stringify(appId)} among yours.`,
      '`slipway applications` lists the applications you can reach.',
    );
  }
  return app;
}

export function requireAdmin(user: User): void {
  if (!user.is_admin) throw new ForbiddenError('Only an administrator can do this.');
}
