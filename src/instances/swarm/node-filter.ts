import { replaceNodeFilterScript, type NodeFilterConfig } from '../../network/node-filter-rules.js';
import { baseImageTag, debianSuite, importBaseImage } from './base-image.js';
import { DockerApiError, type DockerApi } from './docker-api.js';
import { imageExists, pullImage, pushImage } from './image-transfer.js';
import type { RegistryAccess } from './registry.js';
import { LogFrameReader } from './log-frames.js';
import { LABEL_OWNER } from './service-spec.js';

/** What the filter's image holds: `nft` and what it needs, from Debian, nothing else. */
export const NFT_PACKAGES = ['nftables'];
const BRIDGE_NAME_OPTION = 'com.docker.network.bridge.name';
/** The script reaches `nft` through the environment: the command line stays fixed. */
const APPLY = 'printf "%s" "$SLIPWAY_NODE_FILTER" | /usr/sbin/nft -f -';

export interface NodeFilterOptions {
  /** The manager's Docker API, where the image is built and pushed from. */
  manager: DockerApi;
  /** The registry every node pulls from. */
  registry: RegistryAccess;
  /** This daemon's owner name (`slipway77`): names the table and labels the container. */
  owner: string;
  /** The tasks' swarm network: each node's part comes from `<network>-config` on that node. */
  networkName: string;
  /** The control machine's address on the tasks' network: the only place a node's tasks may reach. */
  controlMachine: string;
  log(line: string): void;
}

/**
 * Filters the tasks' bridge of the swarm's other nodes, which the daemon cannot reach with
 * `nft` or `ip`: through each node's declared Docker API, a short-lived container of that node
 * (its host network namespace, CAP_NET_ADMIN alone, an image of Debian's nftables built here and
 * pulled from the registry) replaces slipway's table there (node-filter-rules.ts). Once per
 * node and daemon run: at start for the nodes declared then, and when a task is first seen on
 * a node.
 */
export class NodeFilter {
  private image: Promise<string> | undefined;
  private readonly applied = new Map<string, Promise<boolean>>();

  constructor(private readonly o: NodeFilterOptions) {}

  get table(): string {
    return `${this.o.owner}node`;
  }

  /**
   * Filters the node once. Resolves false, filtering nothing, when the node has no part of the
   * tasks' network yet (no task can run there); then the next call tries again.
   */
  ensure(nodeId: string, api: DockerApi): Promise<boolean> {
    let pending = this.applied.get(nodeId);
    if (!pending) {
      pending = this.apply(nodeId, api);
      this.applied.set(nodeId, pending);
      pending.then(
        (done) => done || this.applied.delete(nodeId),
        () => this.applied.delete(nodeId),
      );
    }
    return pending;
  }

  private async apply(nodeId: string, api: DockerApi): Promise<boolean> {
    const config = await this.configOf(api);
    if (!config) return false;
    const image = await this.ensureImage();
    await pullImage(api, image, this.o.registry, `swarm node ${nodeId}`);
    const { Id: id } = await api.json<{ Id: string }>({
      method: 'POST',
      path: '/containers/create',
      body: {
        Image: image,
        Cmd: ['/bin/sh', '-c', APPLY],
        Env: [`SLIPWAY_NODE_FILTER=${replaceNodeFilterScript(config)}`],
        Labels: { [LABEL_OWNER]: this.o.owner },
        HostConfig: { NetworkMode: 'host', CapDrop: ['ALL'], CapAdd: ['CAP_NET_ADMIN'], ReadonlyRootfs: true },
      },
      what: `create the filter's container on swarm node ${nodeId}`,
    });
    try {
      await api.json({ method: 'POST', path: `/containers/${id}/start`, what: `start the filter's container on swarm node ${nodeId}` });
      const { StatusCode: code } = await api.json<{ StatusCode: number }>({
        method: 'POST',
        path: `/containers/${id}/wait`,
        what: `wait for the filter's container on swarm node ${nodeId}`,
        timeoutMs: 60_000,
      });
      if (code !== 0) {
        throw new Error(
          `Could not filter the tasks' bridge ${config.bridge} on swarm node ${nodeId}: nft exited with ${code} (${await this.errors(api, id)}).`,
        );
      }
    } finally {
      await api
        .json({ method: 'DELETE', path: `/containers/${id}`, query: { force: true }, what: 'remove the filter container' })
        .catch(() => undefined);
    }
    this.o.log(
      `swarm node ${nodeId}: its tasks' bridge ${config.bridge} (${config.subnet}) is filtered (table ${this.table}: tasks reach ${this.o.controlMachine} only)`,
    );
    return true;
  }

  /** The node's bridge and part of the subnet, from its configuration network; undefined without one. */
  private async configOf(api: DockerApi): Promise<NodeFilterConfig | undefined> {
    const name = `${this.o.networkName}-config`;
    let network: { Options?: Record<string, string>; IPAM?: { Config?: Array<{ Subnet?: string; IPRange?: string }> } };
    try {
      network = await api.json({ path: `/networks/${name}`, what: `inspect network ${name}` });
    } catch (e) {
      if (e instanceof DockerApiError && e.status === 404) return undefined;
      throw e;
    }
    const bridge = network.Options?.[BRIDGE_NAME_OPTION];
    const part = network.IPAM?.Config?.[0];
    const subnet = part?.IPRange || part?.Subnet;
    if (!bridge || !subnet)
      throw new Error(
        `Network ${name} of a swarm node must name its bridge (--opt ${BRIDGE_NAME_OPTION}=...) and its subnet for slipway to filter it (docs/swarm.md, "Several machines").`,
      );
    return { table: this.table, bridge, subnet, controlMachine: [this.o.controlMachine] };
  }

  /** Built once from Debian packages on the manager (no image hub) and pushed for the nodes to pull. */
  private ensureImage(): Promise<string> {
    this.image ??= (async () => {
      const repository = `${this.o.registry.address}/slipway/nft`;
      const tag = baseImageTag(debianSuite(), NFT_PACKAGES);
      const name = `${repository}:${tag}`;
      const exists = await imageExists(this.o.manager, name);
      if (!exists) await importBaseImage(this.o.manager, repository, tag, this.o.log, NFT_PACKAGES);
      await pushImage(this.o.manager, name, this.o.registry);
      return name;
    })();
    this.image.catch(() => (this.image = undefined));
    return this.image;
  }

  /** What nft said (its standard error), for the message. The script is the daemon's own, not read from the node. */
  private async errors(api: DockerApi, id: string): Promise<string> {
    const lines: string[] = [];
    try {
      const res = await api.stream({
        path: `/containers/${id}/logs`,
        query: { stdout: true, stderr: true },
        what: "read the filter's output",
      });
      const reader = new LogFrameReader((_stream, line) => lines.push(line));
      for await (const chunk of res) reader.push(chunk as Buffer);
      reader.end();
    } catch {
      // no output to give
    }
    return lines.join(' ').trim().slice(0, 500) || 'no output';
  }
}
