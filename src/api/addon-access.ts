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
import { FS_BUCKET } from '../addons/fs-bucket/fs-bucket-provider.js';
import { mountPathsOf } from '../addons/fs-bucket/app-buckets.js';
import { isExclusive } from '../addons/fs-bucket/exclusive-volume.js';
import { BUCKET_VARIABLE } from '../core/fs-bucket-variables.js';
import { appEnvironment } from '../links/app-environment.js';

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

export function addonView(store: Store, addon: AddonRow, manager?: AddonManager): AddonView {
  const view: AddonView = {
    id: addon.id,
    name: addon.name,
    provider: addon.provider,
    org_id: addon.org_id,
    org_name: store.orgs.byId(addon.org_id)?.name ?? null,
    created_at: addon.created_at,
    linked_apps: store.links.appsOfAddon(addon.id),
  };
  if (addon.provider === FS_BUCKET && manager) view.bucket = bucketView(store, addon, manager, view.linked_apps);
  return view;
}

/** An FS bucket's size used against its size and where each linked app sees it (its CC_FS_BUCKET variables). */
function bucketView(store: Store, addon: AddonRow, manager: AddonManager, appIds: string[]): NonNullable<AddonView['bucket']> {
  const config = store.addons.config(addon);
  let use: { usedBytes: number; sizeBytes: number } | undefined;
  try {
    use = manager.use(addon);
  } catch {
    use = undefined; // measured again at the next listing
  }
  const host = config.host ?? '';
  return {
    host,
    size_bytes: use?.sizeBytes ?? (Number(config.size_bytes) || 0),
    used_bytes: use?.usedBytes ?? null,
    mounts: appIds.flatMap((appId) => mountPathsOf(appEnvironment(store, manager, appId), host).map((path) => ({ app_id: appId, path }))),
    exclusive: isExclusive(config),
  };
}

/**
 * An FS bucket is not unlinked from an app whose own variables still name it: its next start
 * would refuse the variable (app-buckets.ts), and a crashed instance could not be replaced. The
 * user removes the variable first, knowing the app stops seeing those files.
 */
export function assertBucketUnnamed(store: Store, addon: AddonRow, appIds: readonly string[]): void {
  if (addon.provider !== FS_BUCKET) return;
  const host = store.addons.config(addon).host;
  if (!host) return;
  for (const appId of appIds) {
    const naming = store.env
      .list(appId)
      .filter((v) => BUCKET_VARIABLE.test(v.name) && v.value.trim().toLowerCase().endsWith(`:${host}`))
      .map((v) => v.name);
    if (naming.length === 0) continue;
    const app = store.apps.byId(appId);
    throw new ConflictError(
      `The application ${app?.name ?? appId} mounts the bucket ${addon.name} (${naming.join(', ')}).`,
      `Remove the variable first (\`slipway env rm ${naming[0]} --app ${app?.name ?? appId}\`), then unlink: the app no longer sees those files from its next start.`,
    );
  }
}

export function addonManager(ctx: ApiRequest): AddonManager {
  if (!ctx.deps.addons) throw new SlipwayError(503, 'unavailable', 'Add-ons are not available on this daemon.');
  return ctx.deps.addons;
}
