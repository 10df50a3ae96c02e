/**
 * A network namespace of its own for one build, hook or one-off command: the sandbox joins it,
 * on the same bridge and address pool as the instances, and the firewall decides what it reaches.
 */
export interface BuildNetwork {
  namespacePath: string;
  address: string;
  release(): Promise<void>;
}

/** Who hands build networks out: the host's bridge (host-bridge.ts), which owns their addresses. */
export interface BuildNetworks {
  acquireBuildNetwork(appId: string): Promise<BuildNetwork>;
}
