/**
 * What the instance backend tells the network room about its sandboxes. A build or an instance
 * is announced once its network namespace has an address and before its first process starts,
 * and withdrawn once it stopped, so the firewall and the add-on servers open to an address only
 * while the sandbox of the right app holds it.
 */

export type SandboxKind = 'build' | 'instance';

export interface SandboxAttachment {
  /** The app the sandbox runs for: it may reach the add-ons linked to that app. */
  appId: string;
  kind: SandboxKind;
  /** Its IPv4 address on the bridge. */
  address: string;
}

export interface NetworkEvents {
  /** Resolves once the sandbox may use the network as its kind and app allow. */
  attached(event: SandboxAttachment): Promise<void>;
  /** The address is free again: nothing may be allowed to it any more. */
  detached(address: string): Promise<void>;
}
