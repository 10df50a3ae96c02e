/**
 * Which sandbox may reach which add-on: a pure function of the add-on servers, the links in the
 * store and the sandboxes alive now. Its answer feeds both gates an add-on server has: the
 * firewall (the pair sandbox address . port) and, for the shared PostgreSQL cluster, pg_hba.conf
 * (the database, opened to that address only). Builds count like instances: a build step may
 * need its app's database (migrations), never another app's.
 */
import type { AddonEndpoint } from './firewall-rules.js';
import type { SandboxAttachment } from './network-events.js';

/**
 * One database of the shared PostgreSQL cluster opened to one sandbox address (a line of
 * pg_hba.conf): its app is linked to the add-on.
 */
export interface HbaClient {
  database: string;
  role: string;
  /** IPv4 address of a build or an instance of a linked app. */
  address: string;
}

/** Where an add-on's server listens, as its linked apps are told. */
export interface AddonServer {
  addonId: string;
  provider: string;
  host: string;
  port: number;
  /** PostgreSQL: the add-on's own database and role. */
  database?: string;
  role?: string;
}

export interface AddonLink {
  appId: string;
  addonId: string;
}

export interface AddonAccessInput {
  /** The host's address on the bridge: only servers listening there are behind the firewall. */
  gateway: string;
  servers: AddonServer[];
  links: AddonLink[];
  sandboxes: SandboxAttachment[];
}

export interface AddonAccessPlan {
  /** For the firewall's addon_access set. */
  endpoints: AddonEndpoint[];
  /**
   * For the firewall's addon_ports set: the port of every add-on server on the host (linked or
   * not), which no local user but root may open.
   */
  serverPorts: number[];
  /** For the embedded PostgreSQL cluster's pg_hba.conf. */
  postgresql: HbaClient[];
}

export function addonAccess(input: AddonAccessInput): AddonAccessPlan {
  const servers = new Map(input.servers.map((s) => [s.addonId, s]));
  const serverPorts = [...new Set(input.servers.filter((s) => s.host === input.gateway).map((s) => s.port))].sort((a, b) => a - b);
  const addonsOfApp = new Map<string, AddonServer[]>();
  for (const link of input.links) {
    const server = servers.get(link.addonId);
    // An add-on elsewhere (an external PostgreSQL) is reached through the world, like any host.
    if (!server || server.host !== input.gateway) continue;
    addonsOfApp.set(link.appId, [...(addonsOfApp.get(link.appId) ?? []), server]);
  }
  const endpoints = new Map<string, AddonEndpoint>();
  const postgresql = new Map<string, HbaClient>();
  for (const sandbox of input.sandboxes) {
    for (const server of addonsOfApp.get(sandbox.appId) ?? []) {
      endpoints.set(`${sandbox.address} ${server.port}`, { address: sandbox.address, port: server.port });
      if (server.provider === 'postgresql' && server.database && server.role) {
        postgresql.set(`${server.database} ${server.role} ${sandbox.address}`, {
          database: server.database,
          role: server.role,
          address: sandbox.address,
        });
      }
    }
  }
  return {
    endpoints: [...endpoints.values()].sort((a, b) => compareAddresses(a.address, b.address) || a.port - b.port),
    serverPorts,
    postgresql: [...postgresql.values()].sort((a, b) => a.database.localeCompare(b.database) || compareAddresses(a.address, b.address)),
  };
}

/**
 * Reads an add-on's server from the variables its linked apps receive (the provider contract's
 * one public view of it): `POSTGRESQL_ADDON_HOST/PORT/DB/USER`, `REDIS_HOST/PORT`, or for another
 * provider its first `*_HOST` and `*_PORT`. Undefined when they name no server.
 */
export function addonServerOf(addon: { id: string; provider: string }, env: Record<string, string>): AddonServer | undefined {
  const named = (suffix: string) => Object.entries(env).find(([name]) => name.endsWith(suffix))?.[1];
  const host = addon.provider === 'postgresql' ? env.POSTGRESQL_ADDON_HOST : addon.provider === 'redis' ? env.REDIS_HOST : named('_HOST');
  const portText =
    addon.provider === 'postgresql' ? env.POSTGRESQL_ADDON_PORT : addon.provider === 'redis' ? env.REDIS_PORT : named('_PORT');
  const port = Number(portText);
  if (!host || !portText || !/^\d{1,5}$/.test(portText) || port < 1 || port > 65535) return undefined;
  const server: AddonServer = { addonId: addon.id, provider: addon.provider, host, port };
  if (addon.provider === 'postgresql') {
    server.database = env.POSTGRESQL_ADDON_DB;
    server.role = env.POSTGRESQL_ADDON_USER;
  }
  return server;
}

function compareAddresses(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 4; i++) if (pa[i] !== pb[i]) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}
