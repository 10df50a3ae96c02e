import { DockerApi, DockerApiError, parseDockerEndpoint } from './docker-api.js';

/** The node label where the operator declares how the control machine reaches a node's own Docker API. */
export const NODE_API_LABEL = 'slipway.docker-api';
/** A node's declared address is read again after this long: a relabelled node is followed. */
const NODE_API_TTL_MS = 30_000;

/** A task runs on a node whose Docker API slipway cannot reach: says what the operator does. */
export class NodeApiUnknownError extends Error {}

interface NodeAnswer {
  ID: string;
  Spec?: { Labels?: Record<string, string> };
  Description?: { Hostname?: string };
}

/**
 * The Docker API of the node a task runs on. A swarm manager's API tells where every task is
 * but only holds its own node's containers: reading a task's address, signalling it and running
 * a command in it go to the task's node. The manager's own tasks use the manager's API; another
 * node's API is the address its `slipway.docker-api` label declares (`docker node update
 * --label-add slipway.docker-api=unix:///run/slipway-nodes/w2.sock w2`), read through the
 * manager, so nodes joining a running swarm need no restart of the daemon.
 */
export class NodeApis {
  private ownNodeId: string | undefined;
  private readonly known = new Map<string, { api: DockerApi; address: string; readAt: number }>();

  constructor(readonly manager: DockerApi) {}

  /** The manager's own node (GET /info's Swarm.NodeID). */
  setOwnNode(nodeId: string): void {
    this.ownNodeId = nodeId;
  }

  /** True for tasks on the control machine's own node: what it does with `ip`/`nsenter` reaches them. */
  isOwn(nodeId: string | undefined): boolean {
    return nodeId === undefined || nodeId === '' || nodeId === this.ownNodeId;
  }

  /** The other nodes that take tasks but have no declared Docker API: tasks placed there cannot start. */
  async undeclared(): Promise<string[]> {
    const nodes = await this.manager.json<Array<NodeAnswer & { Spec?: { Availability?: string } }>>({
      path: '/nodes',
      what: 'list the swarm nodes',
    });
    return nodes
      .filter((n) => !this.isOwn(n.ID) && n.Spec?.Availability === 'active' && !n.Spec?.Labels?.[NODE_API_LABEL])
      .map((n) => (n.Description?.Hostname ? `${n.Description.Hostname} (${n.ID})` : n.ID));
  }

  /** The other nodes of the swarm whose Docker API is declared, with it. */
  async declared(): Promise<Array<{ nodeId: string; api: DockerApi }>> {
    const nodes = await this.manager.json<NodeAnswer[]>({ path: '/nodes', what: 'list the swarm nodes' });
    const found: Array<{ nodeId: string; api: DockerApi }> = [];
    for (const node of nodes) {
      if (this.isOwn(node.ID) || !node.Spec?.Labels?.[NODE_API_LABEL]) continue;
      found.push({ nodeId: node.ID, api: await this.of(node.ID) });
    }
    return found;
  }

  /** The API of the node a task runs on; says how to declare it when the node has none. */
  async of(nodeId: string | undefined): Promise<DockerApi> {
    if (this.isOwn(nodeId)) return this.manager;
    const cached = this.known.get(nodeId!);
    if (cached && Date.now() - cached.readAt < NODE_API_TTL_MS) return cached.api;
    let node: NodeAnswer;
    try {
      node = await this.manager.json<NodeAnswer>({ path: `/nodes/${nodeId}`, what: 'inspect a swarm node' });
    } catch (e) {
      if (cached) return cached.api;
      if (e instanceof DockerApiError && e.status === 404) throw new Error(`Swarm node ${nodeId} has left the swarm.`);
      throw e;
    }
    const address = node.Spec?.Labels?.[NODE_API_LABEL];
    const name = node.Description?.Hostname ? `${node.Description.Hostname} (${nodeId})` : nodeId!;
    if (!address) {
      throw new NodeApiUnknownError(
        `A task runs on swarm node ${name}, whose Docker API slipway does not know. Declare it on a manager: ` +
          `docker node update --label-add ${NODE_API_LABEL}=unix:///run/slipway-nodes/<node>.sock ${nodeId} (docs/swarm.md, "Several machines").`,
      );
    }
    try {
      parseDockerEndpoint(address);
    } catch (e) {
      throw new NodeApiUnknownError(`Swarm node ${name}: label ${NODE_API_LABEL}: ${(e as Error).message}`);
    }
    const api =
      cached?.address === address
        ? cached.api
        : new DockerApi(
            address,
            `It is the Docker API that the ${NODE_API_LABEL} label of swarm node ${name} declares: check that it runs there and that its socket is forwarded (docs/swarm.md, "Several machines").`,
          );
    this.known.set(nodeId!, { api, address, readAt: Date.now() });
    return api;
  }
}
