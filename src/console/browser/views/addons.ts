import { enc, type Addon, type App, type Org } from '../api.js';
import { formatTime, h, replaceChildren } from '../dom.js';
import { href, type Route } from '../routes.js';
import { pageTitle, type ViewContext } from '../view.js';
import { backupsSection } from './addon-backups.js';
import { humanSize } from '../../../shared/human-size.js';

/**
 * An FS bucket's size used against its size (a meter; "not mounted" when the daemon has it
 * unmounted) and the path at which each linked app sees it, as `slipway addon list` prints them.
 */
function bucketFacts(bucket: NonNullable<Addon['bucket']>, appName: Map<string, string>): HTMLElement {
  const used = bucket.used_bytes;
  return h(
    'div',
    { class: 'bucket-facts' },
    used === null
      ? h('p', { class: 'bucket-use' }, `Size ${humanSize(bucket.size_bytes)}; not mounted now, so its use is not known.`)
      : h(
          'p',
          { class: 'bucket-use' },
          `${humanSize(used)} used of ${humanSize(bucket.size_bytes)} `,
          h('meter', { min: 0, max: bucket.size_bytes, value: used, 'aria-label': 'Size used' }),
        ),
    bucket.exclusive
      ? h('p', { class: 'bucket-exclusive' }, 'Exclusive volume: one instance of one application mounts it at a time.')
      : null,
    bucket.mounts.length
      ? h(
          'ul',
          { class: 'bucket-mounts', 'aria-label': 'Mount paths' },
          ...bucket.mounts.map((m) =>
            h(
              'li',
              {},
              h('a', { href: href({ page: 'app-services', app: m.app_id }) }, appName.get(m.app_id) ?? m.app_id),
              ' sees it at ',
              h('code', {}, m.path),
            ),
          ),
        )
      : h('p', { class: 'empty' }, 'No app mounts it yet (CC_FS_BUCKET, or link it with --mount).'),
  );
}

/** An organisation's add-ons, the applications each is linked to, and each one's backups. */
export async function addonsView(ctx: ViewContext, route: Extract<Route, { page: 'addons' }>): Promise<void> {
  const [{ org }, { addons }, { apps }] = await Promise.all([
    ctx.api.get<{ org: Org }>(`/v1/orgs/${enc(route.org)}`),
    ctx.api.get<{ addons: Addon[] }>(`/v1/addons?org=${enc(route.org)}`),
    ctx.api.get<{ apps: App[] }>(`/v1/apps?org=${enc(route.org)}`),
  ]);
  const appName = new Map(apps.map((a) => [a.id, a.name]));
  replaceChildren(
    ctx.main,
    h('p', { class: 'crumbs' }, h('a', { href: href({ page: 'home' }) }, org.name), ' / Add-ons'),
    pageTitle(`Add-ons of ${org.name}`),
    h('p', { class: 'actions' }, h('a', { class: 'button', href: href({ page: 'addon-create', org: org.id }) }, 'Create an add-on')),
    addons.length
      ? h(
          'ul',
          { class: 'addon-list', 'aria-label': 'Add-ons' },
          ...addons.map((a) =>
            h(
              'li',
              { class: 'card', 'data-addon': a.id },
              h('h2', {}, a.name, ' ', h('span', { class: 'badge' }, a.provider)),
              h('p', { class: 'meta' }, `${a.id} · created ${formatTime(a.created_at)}`),
              a.bucket ? bucketFacts(a.bucket, appName) : null,
              a.linked_apps.length
                ? h(
                    'p',
                    {},
                    'Linked to: ',
                    ...a.linked_apps.flatMap((id, i) => [
                      i ? ', ' : '',
                      h('a', { href: href({ page: 'app-services', app: id }) }, appName.get(id) ?? id),
                    ]),
                  )
                : h('p', { class: 'empty' }, 'Not linked to any application.'),
              backupsSection(ctx, a),
            ),
          ),
        )
      : h('p', { class: 'empty' }, 'No add-on yet.'),
  );
}
