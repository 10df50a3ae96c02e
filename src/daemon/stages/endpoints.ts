import type { PublicEndpoints } from '../../api/platform.js';
import type { DaemonOptions } from '../options.js';

/** Where users reach this machine: git remotes, the router, the apps' domain. */
export function endpointsOf(options: DaemonOptions): PublicEndpoints {
  return { host: options.publicHost, sshPort: options.sshPort, routerPort: options.routerPort, domain: options.domain };
}
