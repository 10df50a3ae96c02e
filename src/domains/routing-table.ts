import type { Store } from '../store/store.js';
import type { HostRoute, RoutingTable, Upstream } from '../router/router.js';
import { settingsFrom } from '../core/app-settings.js';

/**
 * The whole routing table: every application at `<app_id>.<domain>`, and at each of its custom
 * domains (exact or wildcard, once verified) with the same upstreams and its force-https setting.
 */
export function buildRoutingTable(store: Store, platformDomain: string, upstreamsOf: (appId: string) => Upstream[]): RoutingTable {
  const table = new Map<string, HostRoute>();
  const routes = new Map<string, HostRoute>();
  for (const app of store.apps.all()) {
    const route: HostRoute = {
      appId: app.id,
      upstreams: upstreamsOf(app.id),
      forceHttps: settingsFrom(store.appConfig.all(app.id))['force-https'],
    };
    routes.set(app.id, route);
    table.set(`${app.id}.${platformDomain}`, route);
  }
  for (const domain of store.domains.all()) {
    const route = routes.get(domain.app_id);
    // A domain waiting for its DNS proof is not routed: its name is not shown to be the tenant's yet.
    if (route && domain.verified_at !== null) table.set(domain.fqdn, route);
  }
  return table;
}
