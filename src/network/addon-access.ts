import type { Store } from '../store/store.js';
import type { AddonManager } from '../addons/addon-manager.js';
import type { AddonEndpoint } from './firewall-rules.js';
import type { AddonAccessResolver, SandboxAddress } from './firewall.js';

/**
 * The ports an add-on's variables name (`POSTGRESQL_ADDON_PORT`, `REDIS_PORT`): what its
 * server listens on for the sandboxes.
 */
export function addonPorts(env: Record<string, string>): number[] {
  return Object.entries(env)
    .filter(([name, value]) => /(^|_)PORT$/.test(name) && /^\d{1,5}$/.test(value))
    .map(([, value]) => Number(value))
    .filter((port) => port > 0 && port < 65536);
}

/** Each sandbox may reach the servers of the add-ons linked to its app, and no others. */
export function addonEndpoints(sandboxes: SandboxAddress[], portsOfApp: (appId: string) => number[]): AddonEndpoint[] {
  const endpoints: AddonEndpoint[] = [];
  for (const sandbox of sandboxes) {
    for (const port of portsOfApp(sandbox.appId)) endpoints.push({ address: sandbox.address, port });
  }
  return endpoints;
}

export function addonEndpointsFor(store: Store, addons: AddonManager): AddonAccessResolver {
  return (sandboxes) =>
    addonEndpoints(sandboxes, (appId) => {
      const ports: number[] = [];
      for (const addon of store.links.addonsOf(appId)) {
        try {
          ports.push(...addonPorts(addons.env(addon)));
        } catch {
          // an add-on whose provider is not running has no server to reach
        }
      }
      return ports;
    });
}
