/**
 * The tasks' network of a swarm backend: a bridge on each node made a swarm network so services
 * can join it, its address range from a configuration network, and the route that keeps the
 * tasks' addresses on this machine when Docker removes the bridge. Kept apart from the backend
 * because it is the one piece that outlives every service (created at init, removed at uninstall).
 */
import { runCommand } from '../../executor/run-command.js';
import { DockerApiError, type DockerApi } from './docker-api.js';
import { LABEL_OWNER } from './service-spec.js';
import { SYSTEM_TOOL_ENV } from '../../executor/system-tools.js';

const BRIDGE_NAME_OPTION = 'com.docker.network.bridge.name';

export interface TasksNetworkOptions {
  api: DockerApi;
  owner: string;
  /** A /16 no node uses otherwise (e.g. 172.31.0.0/16), first address the node's own. */
  subnet: string;
  /** The bridge each node makes for the network (up to 15 characters). */
  bridgeName: string;
}

export class TasksNetwork {
  /** The swarm network services join; its configuration network is `<name>-config`. */
  readonly name: string;
  readonly bridgeName: string;
  /** The node's address on the network: where tasks reach this machine. */
  readonly gatewayAddress: string;

  constructor(private readonly o: TasksNetworkOptions) {
    this.name = `${o.owner}-instances`;
    this.bridgeName = o.bridgeName;
    if (!/^[A-Za-z0-9_-]{1,15}$/.test(this.bridgeName))
      throw new Error(`Invalid bridge name ${JSON.stringify(this.bridgeName)}: up to 15 letters, digits, "_" or "-".`);
    this.gatewayAddress = gatewayOf(o.subnet);
  }

  get configName(): string {
    return `${this.name}-config`;
  }

  /**
   * Creates the network, or finds it in place (nothing here touches a running task). Its address
   * range comes from a configuration network (on a multi-node swarm each node has its own range:
   * docs/swarm.md); one naming another bridge than the firewall filters is refused.
   */
  async ensure(): Promise<void> {
    const { api } = this.o;
    if (await this.exists(this.configName)) {
      const config = await api.json<{ Options?: Record<string, string> }>({
        path: `/networks/${this.configName}`,
        what: `inspect network ${this.configName}`,
      });
      const bridge = config.Options?.[BRIDGE_NAME_OPTION];
      if (bridge !== this.bridgeName) {
        throw new Error(
          `Network ${this.configName} names the bridge ${JSON.stringify(bridge ?? '(none)')}, not ${this.bridgeName} which the firewall filters. ` +
            `Remove it (docker network rm ${this.name} ${this.configName}) and start again.`,
        );
      }
    } else {
      await api.json({
        method: 'POST',
        path: '/networks/create',
        body: {
          Name: this.configName,
          ConfigOnly: true,
          // The control machine's tasks take the lower half; other nodes' parts come from the upper one (docs/swarm.md).
          IPAM: { Config: [{ Subnet: this.o.subnet, IPRange: lowerHalf(this.o.subnet), Gateway: this.gatewayAddress }] },
          Options: { [BRIDGE_NAME_OPTION]: this.bridgeName },
          Labels: { [LABEL_OWNER]: this.o.owner },
        },
        what: `create the configuration of network ${this.name}`,
      });
    }
    if (!(await this.exists(this.name))) {
      await api.json({
        method: 'POST',
        path: '/networks/create',
        body: { Name: this.name, Driver: 'bridge', Scope: 'swarm', ConfigFrom: { Network: this.configName } },
        what: `create network ${this.name}`,
      });
    }
    await this.ip(['route', 'replace', ...this.fallbackRoute()]);
  }

  /** Removes the network, its configuration and the fallback route (uninstall, tests). */
  async remove(): Promise<void> {
    for (const name of [this.name, this.configName]) {
      // The configuration stays "in use" for a moment after the swarm network is gone.
      for (let attempt = 0; ; attempt++) {
        try {
          await this.o.api.json({ method: 'DELETE', path: `/networks/${name}`, what: `remove network ${name}` });
          break;
        } catch (e) {
          if (e instanceof DockerApiError && e.status === 404) break;
          if (attempt >= 40) throw e;
          await new Promise((r) => setTimeout(r, 250));
        }
      }
    }
    await this.ip(['route', 'del', ...this.fallbackRoute()]).catch(() => undefined);
  }

  private async exists(name: string): Promise<boolean> {
    return this.o.api.json({ path: `/networks/${name}`, what: `inspect network ${name}` }).then(
      () => true,
      (e) => {
        if (e instanceof DockerApiError && e.status === 404) return false;
        throw e;
      },
    );
  }

  /**
   * Docker removes a node's bridge with its last container: without this route, the tasks'
   * addresses would then be sent to the default gateway, off the machine. Unreachable instead;
   * the bridge's own route (and on a multi-node swarm, each node's) is more specific or cheaper.
   */
  private fallbackRoute(): string[] {
    return ['unreachable', this.o.subnet, 'metric', '4242'];
  }

  private async ip(args: string[]): Promise<void> {
    const errors: string[] = [];
    const r = await runCommand({
      argv: ['ip', ...args],
      cwd: '/',
      env: SYSTEM_TOOL_ENV,
      timeoutMs: 10_000,
      onLine: (_s, l) => errors.push(l),
    });
    if (r.exitCode !== 0) throw new Error(`Could not set the route of the tasks' network (\`ip ${args.join(' ')}\`): ${errors.join(' ')}`);
  }
}

/** The lower half of a /16: the addresses the control machine's own tasks get. */
function lowerHalf(subnet: string): string {
  return subnet.replace(/\/16$/, '/17');
}

function gatewayOf(subnet: string): string {
  const m = /^(\d{1,3})\.(\d{1,3})\.0\.0\/16$/.exec(subnet);
  if (!m) throw new Error(`The swarm instances' subnet must be a /16 such as 172.31.0.0/16, not ${JSON.stringify(subnet)}.`);
  return `${m[1]}.${m[2]}.0.1`;
}
