import type { AddonProvider } from './provider.js';
import { PostgresqlProvider } from './postgresql/postgresql-provider.js';
import { RedisProvider } from './redis/redis-provider.js';
import { FsBucketProvider } from './fs-bucket/fs-bucket-provider.js';
import type { PortRange } from './redis/port-allocation.js';
import type { PlanLimits } from './plan-limits.js';

/** Names accepted by `slipway addon create <provider>`, in the order `addon providers` lists them. */
export const addonProviderNames = ['postgresql', 'redis', 'fs-bucket'] as const;
export type AddonProviderName = (typeof addonProviderNames)[number];

export interface AddonProvidersOptions {
  /** slipway's data folder (must be enterable by the add-on server users). */
  dataDir: string;
  /** The instance bridge's address on the host: servers listen there and apps get it as HOST. */
  gatewayAddress: string;
  /** Subnet of the app namespaces allowed to log into PostgreSQL; default the /16 around the gateway. */
  appSubnet?: string;
  /** Embedded PostgreSQL port (default 5433). */
  postgresPort?: number;
  /** Use an existing PostgreSQL server instead of the embedded one (admin URL). */
  postgresExternalUrl?: string;
  /** Ports for Redis add-ons, both ends included (default DEFAULT_REDIS_PORT_RANGE). */
  redisPortRange?: [number, number];
  /** What one add-on of each plan may use (default DEFAULT_PLAN_LIMITS). */
  planLimits?: PlanLimits;
  /** Name of the control-group root the add-on servers are limited under (e.g. `slipway77-addons`). */
  cgroupRoot?: string;
  /** The daemon's log, for what a start finds and mends (an FS bucket left frozen). */
  log?(line: string): void;
}

export function makeAddonProviders(options: AddonProvidersOptions): Map<string, AddonProvider> {
  const redisPortRange: PortRange | undefined = options.redisPortRange;
  return new Map<string, AddonProvider>([
    [
      'postgresql',
      new PostgresqlProvider({
        dataDir: options.dataDir,
        gatewayAddress: options.gatewayAddress,
        port: options.postgresPort,
        appSubnet: options.appSubnet,
        externalUrl: options.postgresExternalUrl,
        limits: options.planLimits?.postgresql,
        cgroupRoot: options.cgroupRoot,
      }),
    ],
    [
      'redis',
      new RedisProvider({
        dataDir: options.dataDir,
        gatewayAddress: options.gatewayAddress,
        portRange: redisPortRange,
        limits: options.planLimits?.redis,
        cgroupRoot: options.cgroupRoot,
      }),
    ],
    ['fs-bucket', new FsBucketProvider({ dataDir: options.dataDir, log: options.log })],
  ]);
}

export function isAddonProviderName(name: string): name is AddonProviderName {
  return (addonProviderNames as readonly string[]).includes(name);
}

/** The error for `addon create <unknown>`: names what was asked and what exists. */
export function unknownProviderMessage(name: string): string {
  return `Unknown add-on provider "${name}". Available providers: ${addonProviderNames.join(', ')} (see "slipway addon providers").`;
}
