import type { Lifecycle } from '../lifecycle.js';
import { AddonManager } from '../../addons/addon-manager.js';
import { PostgresqlProvider } from '../../addons/postgresql/postgresql-provider.js';
import { makeAddonProviders } from '../../addons/registry.js';
import type { LocalNetnsBackend } from '../../instances/local/local-netns-backend.js';
import { bothFirewalls, startSwarmBackend, startSwarmFirewall, swarmOptions } from '../../instances/swarm/start.js';
import { AddonAccess } from '../../network/addon-access-sync.js';
import { addonCatalog } from '../../network/addon-catalog.js';
import { Firewall } from '../../network/firewall.js';
import type { Store } from '../../store/store.js';
import { addonProviderOptions } from '../addon-options.js';
import type { DaemonOptions } from '../options.js';
import type { Stoppers } from '../stoppers.js';

/**
 * The instances' network once the local backend is made: its bridge and firewall, the add-on
 * servers (they need the bridge's gateway; they start lazily), who may reach which add-on, and
 * with --backend swarm the swarm's firewall and backend. Each part that outlives the daemon is
 * registered with `stoppers` as part of the data plane, in the order it started (stoppers run in reverse).
 */
export async function startNetwork(input: {
  options: DaemonOptions;
  store: Store;
  backend: LocalNetnsBackend;
  names: { bridgeName: string; cgroupRoot: string };
  log(line: string): void;
  stoppers: Stoppers;
  lifecycle: Lifecycle;
}) {
  const { options, store, backend, names, log, stoppers, lifecycle } = input;
  await backend.init();
  const firewall = new Firewall({
    table: names.cgroupRoot,
    bridge: names.bridgeName,
    subnet: backend.subnet,
    gateway: backend.gatewayAddress,
    routerPorts: [options.routerPort, options.httpsPort].filter((p) => p > 0),
    // Sandboxes are IPv4 only: IPv6 ranges are the daemon's own clients' business.
    egressAllow: options.egressAllow?.filter((cidr) => !cidr.includes(':')),
  });
  await firewall.start();
  // Runs after every sandbox has stopped (stoppers run in reverse order).
  // The firewall's rules and the bridge stay with the sandboxes they serve.
  stoppers.dataPlane(
    'firewall',
    () => firewall.stop(),
    () => undefined,
  );
  // Runs after every instance and add-on server has stopped (stoppers run in reverse order).
  stoppers.dataPlane(
    'instance network',
    () => backend.removeBridge(),
    () => undefined,
  );
  // Add-on servers need the bridge's gateway address; they start lazily (see AddonManager).
  const addonProviders = makeAddonProviders({
    ...addonProviderOptions(options.dataDir, backend.gatewayAddress, process.env),
    // Beside the sandboxes' root, not in it: the sweep of a starting daemon must not kill them.
    cgroupRoot: `${names.cgroupRoot}-addons`,
    log,
  });
  const addons = new AddonManager({ store, providers: addonProviders, log });
  stoppers.dataPlane(
    'add-ons',
    () => addons.stop(),
    () => addons.detach(),
  );
  // Each sandbox reaches the add-ons of its own app only: through the firewall and, for
  // PostgreSQL, pg_hba.conf; both follow sandboxes (told by the backend) and links.
  const postgresql = addonProviders.get('postgresql');
  // With --backend swarm, the tasks' bridge gets the same rules as the sandboxes' one.
  const swarmFirewall =
    options.backend === 'swarm'
      ? await startSwarmFirewall(swarmOptions(options.swarm), names.cgroupRoot, backend.gatewayAddress, [
          options.routerPort,
          options.httpsPort,
        ])
      : undefined;
  if (swarmFirewall)
    stoppers.dataPlane(
      'swarm firewall',
      () => swarmFirewall.stop(),
      () => undefined,
    );
  const addonAccess = new AddonAccess({
    firewall: swarmFirewall ? bothFirewalls(firewall, swarmFirewall) : firewall,
    gateway: backend.gatewayAddress,
    catalog: addonCatalog(store, addons),
    postgresql: postgresql instanceof PostgresqlProvider ? postgresql : undefined,
    log,
  });
  backend.setNetworkEvents(addonAccess);
  // The instances an earlier daemon left serving keep reaching their add-ons from the start on.
  await addonAccess.attachedAll(backend.foundAddresses());
  store.links.onAddonLinksChanged(() => void addonAccess.linksChanged());
  // A new add-on's port is closed to the host's other users as soon as it is recorded.
  addons.onServersChanged(() => void addonAccess.linksChanged());

  // With --backend swarm, the apps' instances and one-off commands run as swarm services;
  // builds and add-on servers stay in this machine's sandboxes (docs/swarm.md).
  const instances =
    options.backend === 'swarm'
      ? await startSwarmBackend(swarmOptions(options.swarm), names.cgroupRoot, addonAccess, log, backend.gatewayAddress, options.dataDir)
      : undefined;
  if (instances)
    stoppers.dataPlane(
      'swarm network',
      () => instances.removeNetwork(),
      () => undefined,
    );
  const instanceBackend = instances ?? backend;
  // The app is gone already: images left behind are pruned at the next start, not an error.
  lifecycle.on('app deleted', async ({ appId }) => {
    if ('forgetApp' in instanceBackend)
      await instanceBackend.forgetApp(appId).catch((e: Error) => log(`could not remove the release images of ${appId}: ${e.message}`));
  });
  return { addonProviders, addons, postgresql, addonAccess, instances, instanceBackend };
}
