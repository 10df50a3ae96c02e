import { existsSync } from 'node:fs';
import { deleteFirewallTable } from '../../network/firewall.js';
import type { SandboxNetworkEvents } from '../local/local-netns-backend.js';
import { DockerApi } from './docker-api.js';
import { LABEL_OWNER } from './service-spec.js';
import { startSwarmBackend, type SwarmOptions } from './start.js';

/**
 * A start on this machine's sandboxes after a start on `--backend swarm`: once the apps were
 * restored here (local instances health-checked, the router switched to them), the swarm
 * services of the earlier start are drained and removed, then the tasks' network and firewall
 * table. The router kept reaching the tasks until then, so the switch back drops no request.
 * Without a Docker API there is nothing to drain; a socket that does not answer is said.
 */
export async function retireSwarmServices(
  swarm: SwarmOptions,
  owner: string,
  networkEvents: SandboxNetworkEvents,
  log: (line: string) => void,
  controlMachineAddress: string,
): Promise<void> {
  if (!existsSync(swarm.dockerSocket)) return;
  let services: unknown[];
  try {
    services = await new DockerApi(swarm.dockerSocket).json({
      path: '/services',
      query: { filters: JSON.stringify({ label: [`${LABEL_OWNER}=${owner}`] }) },
      what: 'list services',
    });
  } catch (error) {
    log(
      `Docker does not answer at ${swarm.dockerSocket} (${(error as Error).message}): swarm services of an earlier --backend swarm start, if any, are not drained; the apps run on this machine's sandboxes.`,
    );
    return;
  }
  if (services.length === 0) return;
  log(`Found ${services.length} swarm service(s) of an earlier --backend swarm start: they stop now that the sandboxes serve.`);
  const backend = await startSwarmBackend(swarm, owner, networkEvents, log, controlMachineAddress);
  // No claim: every instance and worker found is drained (10 s grace) and its service removed.
  await backend.adoptAll(() => undefined);
  await backend.removeNetwork();
  await deleteFirewallTable(`${owner}sw`);
  log('The swarm services of the earlier start are removed.');
}
