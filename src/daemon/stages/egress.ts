import { platformEgressGuard } from '../guards-setup.js';
import type { DaemonBase } from './stage.js';

/**
 * The egress guard every connection the daemon itself opens goes through (docs/security.md).
 * Needs: the ACME challenge responder's port (the edge). Provides: `egress`; the git server and
 * the API add their own ports to it once they listen.
 */
export function egress({ options, acmeChallenge }: DaemonBase & { acmeChallenge: { port: number } }) {
  return { egress: platformEgressGuard(options, acmeChallenge.port) };
}
