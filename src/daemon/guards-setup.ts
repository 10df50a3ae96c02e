import type { ForbiddenTargets } from '../drains/drain-target.js';
import type { AddressGuard } from '../notifications/address-guard.js';
import type { DaemonOptions } from './options.js';

/**
 * What log drains and notifications may never be sent to: slipway's own ports (the API's and
 * the git server's are added to the drains' list once they listen) and the sandboxes' subnets.
 */
export function platformGuards(options: DaemonOptions, acmePort: number): { drainForbidden: ForbiddenTargets; notifyGuard: AddressGuard } {
  const subnets = () => [options.subnet, ...(options.backend === 'swarm' && options.swarm ? [options.swarm.subnet] : [])];
  const drainForbidden: ForbiddenTargets = {
    ports: [options.apiPort, options.sshPort, options.routerPort, options.httpsPort, options.metricsListen?.port ?? 0, acmePort].filter(
      (p) => p > 0,
    ),
    listen: options.listen,
    subnets: subnets(),
  };
  // Webhooks and e-mail about what the platform tells; never to slipway's own ports nor the sandboxes.
  const notifyGuard: AddressGuard = {
    subnets: subnets(),
    ownPorts: [
      { port: options.apiPort, what: 'API' },
      { port: options.sshPort, what: 'git server' },
      { port: options.routerPort, what: 'router' },
      { port: options.httpsPort, what: 'router (HTTPS)' },
      { port: options.metricsListen?.port ?? 0, what: 'metrics server' },
      { port: acmePort, what: 'ACME challenge responder' },
    ].filter((p) => p.port > 0),
  };
  return { drainForbidden, notifyGuard };
}
