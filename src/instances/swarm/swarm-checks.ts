import { HOW_TO_START_DOCKER, type DockerApi } from './docker-api.js';

export interface SwarmNode {
  nodeId: string;
  serverVersion: string;
  managers: number;
  nodes: number;
}

interface InfoAnswer {
  ServerVersion?: string;
  Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean; NodeID?: string; Managers?: number; Nodes?: number };
}

/**
 * What the daemon checks before it runs any instance on Docker Swarm: the API answers and this
 * node is a swarm manager (only managers create services). Each refusal says what to run.
 */
export async function checkSwarmManager(api: DockerApi): Promise<SwarmNode> {
  let info: InfoAnswer;
  try {
    info = await api.json<InfoAnswer>({ path: '/info', what: 'describe the Docker daemon', timeoutMs: 10_000 });
  } catch (error) {
    const message = (error as Error).message;
    throw new Error(message.includes(HOW_TO_START_DOCKER) ? message : `${message} ${HOW_TO_START_DOCKER}`);
  }
  return swarmNodeOf(info);
}

/** Reads the answer of GET /info: separate so the refusals are testable without a daemon. */
export function swarmNodeOf(info: InfoAnswer): SwarmNode {
  const swarm = info.Swarm ?? {};
  const state = swarm.LocalNodeState ?? 'inactive';
  if (state !== 'active') {
    throw new Error(
      `This Docker node is not part of a swarm (state: ${state}). Run \`docker swarm init\` on it to make it a single-node swarm manager, ` +
        'or run slipway on a manager of your swarm (docs/swarm.md).',
    );
  }
  if (!swarm.ControlAvailable) {
    throw new Error(
      'This Docker node is a swarm worker, not a manager: only managers create services. Run slipway on a manager, ' +
        'or promote this node with `docker node promote <node>` on a manager.',
    );
  }
  return {
    nodeId: swarm.NodeID ?? '',
    serverVersion: info.ServerVersion ?? 'unknown',
    managers: swarm.Managers ?? 0,
    nodes: swarm.Nodes ?? 0,
  };
}
