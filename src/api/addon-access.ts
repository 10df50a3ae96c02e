import type { AddonView } from '../shared/api-types.js';
import type { Store } from '../store/store.js';
import type { User } from '../store/users.js';
import type { AddonRow } from '../store/addons.js';
import type { AppRow } from '../store/apps.js';
import type { AddonManager } from '../addons/addon-manager.js';
import type { ApiRequest } from './context.js';
import { ConflictError, NotFoundError, SlipwayError, ValidationError } from '../core/errors.js';
import { isId } from '../core/names.js';
import { orgForUser } from './access.js';

const ADDON_ID = /^addon_/;

function notFound(ref: string): NotFoundError {
  return new NotFoundError(
    `No add-on ${JSON.stringify(ref)} among yours.`,
    '`slipway addon list` shows the add-ons of your organisations.',
  );
}

/**
 * An add-on by id or name, among the organisations of the user (another organisation's
 * add-on is "not found", as for apps). Names are unique per organisation only: a name found
 * in several of the user's organisations needs `org` (or the id).
 */
export function addonForUser(store: Store, user: User, ref: string, orgRef?: string | null): AddonRow {
  if (isId(ref) && ADDON_ID.test(ref)) {
    const addon = store.addons.byId(ref);
    if (!addon || !store.orgs.isMember(addon.org_id, user.id)) throw notFound(ref);
    return addon;
  }
  if (orgRef) {
    const org = orgForUser(store, user, orgRef);
    const addon = store.addons.byName(org.id, ref);
    if (!addon) throw notFound(ref);
    return addon;
  }
  const found = store.addons.byNameForUser(user.id, ref);
  if (found.length === 0) throw notFound(ref);
  if (found.length > 1) {
    const orgs = found.map((a) => store.orgs.byId(a.org_id)?.name ?? a.org_id);
    throw new ConflictError(
      `Several of your organisations have an add-on named ${JSON.stringify(ref)}: ${orgs.join(', ')}.`,
      'Pass --org <org> or the add-on id.',
    );
  }
  return found[0]!;
}

/** An add-on named from an app's page: it must belong to the app's organisation. */
export function addonForApp(store: Store, user: User, app: AppRow, ref: unknown): AddonRow {
  if (typeof ref !== 'string' || ref === '') {
    throw new ValidationError(
      'Missing field "addon" (the add-on id or name).',
      '`slipway addon list` shows the add-ons of your organisations.',
    );
  }
  const addon = isId(ref) && ADDON_ID.test(ref) ? addonForUser(store, user, ref) : store.addons.byName(app.org_id, ref);
  if (!addon)
    throw new NotFoundError(
      `The application's organisation has no add-on ${JSON.stringify(ref)}.`,
      '`slipway addon list --org <org>` shows its add-ons.',
    );
  assertSameOrg(store, addon, app);
  return addon;
}

export function assertSameOrg(store: Store, addon: AddonRow, app: AppRow): void {
  if (addon.org_id !== app.org_id) {
    const orgName = (id: string) => store.orgs.byId(id)?.name ?? id;
    throw new ValidationError(
      `The add-on ${addon.name} belongs to organisation ${orgName(addon.org_id)} but the application ${app.name} to ${orgName(app.org_id)}.`,
      'Only add-ons and applications of the same organisation can be linked.',
    );
  }
}

export function addonView(store: Store, addon: AddonRow): AddonView {
  return {
    id: addon.id,
    name: addon.name,
    provider: addon.provider,
    org_id: addon.org_id,
    org_name: store.orgs.byId(addon.org_id)?.name ?? null,
    created_at: addon.created_at,
    linked_apps: store.links.appsOfAddon(addon.id),
  };
}

export function addonManager(ctx: ApiRequest): AddonManager {
  if (!ctx.deps.addons) throw new SlipwayError(503, 'unavailable', 'Add-ons are not available on this daemon.');
  return ctx.deps.addons;
}
