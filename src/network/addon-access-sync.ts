import type { HbaClient } from './addon-access.js';
import type { AddonEndpoint } from './firewall-rules.js';
import type { NetworkEvents, SandboxAttachment, SandboxKind } from './network-events.js';
import { addonAccess, type AddonLink, type AddonServer } from './addon-access.js';

export interface AddonAccessOptions {
  firewall: {
    addSandbox(kind: SandboxKind, address: string): Promise<void>;
    removeSandbox(kind: SandboxKind, address: string): Promise<void>;
    setAddonAccess(endpoints: AddonEndpoint[], serverPorts: number[]): Promise<void>;
  };
  /** The host's address on the bridge. */
  gateway: string;
  /** The add-on servers and links as the store has them now. */
  catalog(): { servers: AddonServer[]; links: AddonLink[] };
  /** The embedded PostgreSQL cluster, whose pg_hba.conf follows the same plan. */
  postgresql?: { allowClients(clients: HbaClient[]): Promise<void> };
  log(line: string): void;
}

/**
 * Keeps the firewall's sets and PostgreSQL's pg_hba.conf in step with the sandboxes alive and the
 * links in the store. It is what the instance backend tells about addresses (NetworkEvents), and
 * what the store's link changes call. Changes apply one at a time, in the order they came.
 */
export class AddonAccess implements NetworkEvents {
  private readonly sandboxes = new Map<string, SandboxAttachment>();
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly o: AddonAccessOptions) {}

  attached(event: SandboxAttachment): Promise<void> {
    const sandbox = { appId: event.appId, kind: event.kind, address: event.address };
    return this.serialized(async () => {
      const previous = this.sandboxes.get(sandbox.address);
      if (previous && previous.kind !== sandbox.kind) await this.o.firewall.removeSandbox(previous.kind, previous.address);
      this.sandboxes.set(sandbox.address, sandbox);
      await this.o.firewall.addSandbox(sandbox.kind, sandbox.address);
      await this.apply();
    });
  }

  /**
   * Several sandboxes at once, applied once (the instances a new daemon found running, told
   * before it adopts them one by one): none of them loses its access while the others are told.
   */
  attachedAll(events: SandboxAttachment[]): Promise<void> {
    return this.serialized(async () => {
      for (const event of events) {
        this.sandboxes.set(event.address, { appId: event.appId, kind: event.kind, address: event.address });
        await this.o.firewall.addSandbox(event.kind, event.address);
      }
      await this.apply();
    });
  }

  detached(address: string): Promise<void> {
    return this.serialized(async () => {
      const sandbox = this.sandboxes.get(address);
      if (!sandbox) return;
      this.sandboxes.delete(address);
      await this.apply();
      await this.o.firewall.removeSandbox(sandbox.kind, address);
    });
  }

  /** A link between an app and an add-on was made or removed, or an add-on (its server) came or went. */
  linksChanged(): Promise<void> {
    return this.serialized(() => this.apply()).catch((error: Error) =>
      this.o.log(`Could not update add-on access after a link change: ${error.message}`),
    );
  }

  /** Resolves once every change asked for so far has been applied (or has failed). */
  idle(): Promise<void> {
    return this.queue;
  }

  private async apply(): Promise<void> {
    const plan = addonAccess({ ...this.o.catalog(), gateway: this.o.gateway, sandboxes: [...this.sandboxes.values()] });
    await this.o.firewall.setAddonAccess(plan.endpoints, plan.serverPorts);
    try {
      await this.o.postgresql?.allowClients(plan.postgresql);
    } catch (error) {
      // A PostgreSQL server that is down must not stop apps that do not use it from starting;
      // its pg_hba.conf is rewritten from the same plan at its next start.
      this.o.log(`Could not update PostgreSQL's client rules: ${(error as Error).message}`);
    }
  }

  private serialized(work: () => Promise<void>): Promise<void> {
    const done = this.queue.then(work);
    this.queue = done.catch(() => undefined);
    return done;
  }
}
