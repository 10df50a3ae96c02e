import { EgressGuard } from '../../network/egress-guard.js';
import type { DaemonOptions } from '../options.js';
import type { DaemonBase } from './stage.js';

/**
 * The one egress guard of the daemon's own clients (webhooks, mail, drains, the S3 backup
 * store, ACME, the DNS resolver): the operator's `--egress-allow` ranges open what it refuses,
 * never slipway's own ports (the API's and the git server's are added once they listen) nor
 * the sandboxes' subnets. Names are resolved at `--dns-resolver` when one is given.
 */
export function platformEgressGuard(options: DaemonOptions, acmePort: number): EgressGuard {
  const guard = new EgressGuard({
    allow: options.egressAllow ?? [],
    sandboxSubnets: [options.subnet, ...(options.backend === 'swarm' && options.swarm ? [options.swarm.subnet] : [])],
    ownPorts: [
      { port: options.apiPort, what: 'API' },
      { port: options.sshPort, what: 'git server' },
      { port: options.routerPort, what: 'router' },
      { port: options.httpsPort, what: 'router (HTTPS)' },
      { port: options.metricsListen?.port ?? 0, what: 'metrics server' },
      { port: acmePort, what: 'ACME challenge responder' },
    ].filter((p) => p.port > 0),
    listen: options.listen,
    resolver: options.certificates?.dnsResolver,
  });
  // The resolver is connected to like any host (the system's own, in resolv.conf, are not the
  // daemon's choice and stay as they are).
  const resolver = options.certificates?.dnsResolver;
  if (resolver) {
    const [address = '', port = '53'] = resolver.split(/:(?=\d+$)/);
    const refusal = guard.refusal(address, Number(port));
    if (refusal) throw new Error(`--dns-resolver ${resolver} may not be used: ${refusal}.`);
  }
  return guard;
}

/**
 * The egress guard every connection the daemon itself opens goes through (docs/security.md).
 * Needs: the ACME challenge responder's port (the edge). Provides: `egress`; the git server and
 * the API add their own ports to it once they listen.
 */
export function egress({ options, acmeChallenge }: DaemonBase & { acmeChallenge: { port: number } }) {
  return { egress: platformEgressGuard(options, acmeChallenge.port) };
}
