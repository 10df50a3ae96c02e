import type { AddonProvidersOptions } from '../addons/registry.js';
import { parsePlanLimits } from '../addons/plan-limits.js';

/**
 * Where the add-on servers listen, from the daemon's environment, so a second daemon (a test
 * run beside a running platform) can keep clear of the first one's ports:
 *   SLIPWAY_POSTGRES_PORT  port of the PostgreSQL cluster earlier versions shared (default 5433), while its add-ons move
 *   SLIPWAY_POSTGRES_URL   an existing PostgreSQL server to use instead (admin URL)
 *   SLIPWAY_REDIS_PORTS    ports for Redis add-ons, "first-last" (default 20000-29999)
 *   SLIPWAY_ADDON_PLAN_LIMITS  the plans' limits, JSON over the defaults (addons/plan-limits.ts)
 */
export function addonProviderOptions(dataDir: string, gatewayAddress: string, env: NodeJS.ProcessEnv): AddonProvidersOptions {
  const options: AddonProvidersOptions = { dataDir, gatewayAddress };
  const pgPort = env.SLIPWAY_POSTGRES_PORT;
  if (pgPort) {
    const port = Number(pgPort);
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw new Error(`SLIPWAY_POSTGRES_PORT must be a port number between 1 and 65535, not ${JSON.stringify(pgPort)}.`);
    }
    options.postgresPort = port;
  }
  if (env.SLIPWAY_POSTGRES_URL) options.postgresExternalUrl = env.SLIPWAY_POSTGRES_URL;
  const redisPorts = env.SLIPWAY_REDIS_PORTS;
  if (redisPorts) {
    const match = /^(\d{1,5})-(\d{1,5})$/.exec(redisPorts);
    if (!match) throw new Error(`SLIPWAY_REDIS_PORTS must be a range "first-last" such as 6400-6499, not ${JSON.stringify(redisPorts)}.`);
    options.redisPortRange = [Number(match[1]), Number(match[2])];
  }
  if (env.SLIPWAY_ADDON_PLAN_LIMITS) options.planLimits = parsePlanLimits(env.SLIPWAY_ADDON_PLAN_LIMITS);
  return options;
}

/**
 * How often the PostgreSQL add-ons' sizes are checked against their plan, from
 * SLIPWAY_ADDON_SIZE_CHECK_SECONDS (default 60, 1 to 3600).
 */
export function addonSizeCheckMs(env: NodeJS.ProcessEnv): number {
  const text = env.SLIPWAY_ADDON_SIZE_CHECK_SECONDS;
  if (text === undefined || text === '') return 60_000;
  const seconds = Number(text);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 3600) {
    throw new Error(`SLIPWAY_ADDON_SIZE_CHECK_SECONDS must be a whole number of seconds from 1 to 3600, not ${JSON.stringify(text)}.`);
  }
  return seconds * 1000;
}
