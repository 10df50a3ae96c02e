import type { Store } from '../store/store.js';
import type { AddonRow } from '../store/addons.js';
import type { AddonProvider } from './provider.js';
import { SlipwayError, ValidationError } from '../core/errors.js';
import { addonProviderNames, unknownProviderMessage } from './registry.js';
import type { ServerRestart, SupervisionEvents } from './server-supervisor.js';

export interface AddonManagerOptions {
  store: Store;
  providers: ReadonlyMap<string, AddonProvider>;
  log(line: string): void;
}

/** A provider whose servers could not start (PostgreSQL or Redis missing, a port taken...). */
export class AddonUnavailableError extends SlipwayError {
  constructor(message: string, hint?: string) {
    super(503, 'addon_unavailable', message, hint);
  }
}

/** A server restarted after it died, with the apps linked to the add-ons it serves. */
export interface AddonServerRestart extends ServerRestart {
  appIds: string[];
}

/**
 * Ties the add-on records of the store to the providers that own their servers.
 *
 * Providers start lazily: the daemon starts only those that have add-ons (resumeAll), and
 * the others on the first `addon create`, so a platform without add-ons never pays for an
 * initdb or a server it does not use.
 */
export class AddonManager {
  private readonly started = new Map<string, Promise<AddonProvider>>();
  private readonly restartListeners: Array<(restart: AddonServerRestart) => void> = [];
  private readonly serverListeners: Array<() => void> = [];

  constructor(private readonly o: AddonManagerOptions) {
    const events: SupervisionEvents = { log: (line) => o.log(line), restarted: (restart) => this.serverRestarted(restart) };
    for (const provider of o.providers.values()) provider.superviseWith(events);
  }

  /** Called after each restart of a server that died (metrics, the logs of the apps it serves). */
  onServerRestart(listener: (restart: AddonServerRestart) => void): void {
    this.restartListeners.push(listener);
  }

  /**
   * Called once a new add-on's server is recorded (its port is in the store) and once a deleted
   * one's is gone: the firewall keeps the host's other users off every add-on server's port.
   */
  onServersChanged(listener: () => void): void {
    this.serverListeners.push(listener);
  }

  private serversChanged(): void {
    for (const listener of this.serverListeners) listener();
  }

  private serverRestarted(restart: ServerRestart): void {
    let appIds: string[] = [];
    try {
      const addonIds = restart.addonId
        ? [restart.addonId]
        : this.o.store.addons
            .all()
            .filter((row) => row.provider === restart.provider)
            .map((row) => row.id);
      appIds = [...new Set(addonIds.flatMap((id) => this.o.store.links.appsOfAddon(id)))];
    } catch (error) {
      this.o.log(`Could not tell which apps use ${restart.label}: ${(error as Error).message}`);
    }
    for (const listener of this.restartListeners) {
      try {
        listener({ ...restart, appIds });
      } catch (error) {
        this.o.log(`After ${restart.label} restarted: ${(error as Error).message}`);
      }
    }
  }

  /** Providers in the order `slipway addon providers` lists them. */
  providerList(): Array<{ name: string; description: string; limits?: string }> {
    return addonProviderNames
      .filter((n) => this.o.providers.has(n))
      .map((name) => {
        const provider = this.o.providers.get(name)!;
        return { name, description: provider.description, ...(provider.limits ? { limits: provider.limits } : {}) };
      });
  }

  /** The provider of a name a user typed; unknown names are refused with the list. */
  provider(name: unknown): AddonProvider {
    const provider = typeof name === 'string' ? this.o.providers.get(name) : undefined;
    if (!provider)
      throw new ValidationError(
        unknownProviderMessage(String(name)),
        `Available providers: ${this.providerList()
          .map((p) => p.name)
          .join(', ')}.`,
      );
    return provider;
  }

  /** Starts a provider once; a failed start is retried by the next call. */
  ensureStarted(name: string): Promise<AddonProvider> {
    let starting = this.started.get(name);
    if (!starting) {
      const provider = this.provider(name);
      const begun = Date.now();
      starting = provider.start().then(
        () => {
          this.o.log(`Add-on provider ${name} started in ${((Date.now() - begun) / 1000).toFixed(1)} s.`);
          return provider;
        },
        (error: Error) => {
          this.started.delete(name);
          throw new AddonUnavailableError(
            `The ${name} add-on servers could not start: ${error.message}`,
            'Fix the cause above (see also the daemon output) and try again.',
          );
        },
      );
      this.started.set(name, starting);
    }
    return starting;
  }

  /**
   * Daemon start: bring back the servers of every stored add-on, before the apps that use
   * them are restored. Failures are logged, not fatal: the rest of the platform still runs.
   */
  async resumeAll(): Promise<void> {
    let resumed = 0;
    for (const row of this.o.store.addons.all()) {
      const config = this.o.store.addons.config(row);
      if (Object.keys(config).length === 0) {
        // The daemon stopped while this add-on was being provisioned: its record never got credentials.
        this.o.log(`Add-on ${row.name} (${row.id}) was never fully created; removing its record.`);
        this.o.store.addons.remove(row.id);
        continue;
      }
      try {
        const provider = await this.ensureStarted(row.provider);
        await provider.resume({ id: row.id }, config);
        resumed++;
      } catch (error) {
        this.o.log(`Add-on ${row.name} (${row.id}, ${row.provider}) could not be resumed: ${(error as Error).message}`);
      }
    }
    if (resumed) this.o.log(`Resumed ${resumed} add-on(s).`);
  }

  /** Records, provisions and stores the credentials of a new add-on. */
  async create(input: { orgId: string; provider: string; name: string; plan?: string; exclusive?: boolean }): Promise<AddonRow> {
    this.provider(input.provider);
    const row = this.o.store.addons.create({ orgId: input.orgId, provider: input.provider, name: input.name });
    try {
      const provider = await this.ensureStarted(input.provider);
      const { config } = await provider.provision({
        id: row.id,
        name: row.name,
        ...(input.plan ? { plan: input.plan } : {}),
        ...(input.exclusive ? { exclusive: true } : {}),
      });
      this.o.store.addons.setConfig(row.id, config);
      this.serversChanged();
      return this.o.store.addons.byId(row.id)!;
    } catch (error) {
      this.o.store.addons.remove(row.id);
      if (error instanceof SlipwayError) throw error;
      throw new SlipwayError(
        500,
        'provision_failed',
        `The ${input.provider} add-on could not be created: ${(error as Error).message}`,
        'Nothing was kept; try again, and see the daemon output if it fails again.',
      );
    }
  }

  /**
   * The variables a linked app receives. Pure (no I/O), so the environment of an app can be
   * computed synchronously at every build and start. An add-on still being provisioned has none.
   */
  env(row: AddonRow): Record<string, string> {
    const config = this.o.store.addons.config(row);
    if (Object.keys(config).length === 0) return {};
    return this.provider(row.provider).env(config);
  }

  /** Size used against size of an add-on that has one (an FS bucket); undefined for the others or when not mounted. */
  use(row: AddonRow): { usedBytes: number; sizeBytes: number } | undefined {
    const config = this.o.store.addons.config(row);
    if (Object.keys(config).length === 0) return undefined;
    return this.o.providers.get(row.provider)?.use?.(row.id, config);
  }

  /** Destroys the add-on's data and its record (links go with it). */
  async remove(row: AddonRow): Promise<void> {
    const config = this.o.store.addons.config(row);
    if (Object.keys(config).length > 0) {
      const provider = await this.ensureStarted(row.provider);
      try {
        await provider.deprovision({ id: row.id }, config);
      } catch (error) {
        throw new SlipwayError(
          500,
          'deprovision_failed',
          `The add-on ${row.name} could not be deleted: ${(error as Error).message}`,
          'It is kept; try again, and see the daemon output if it fails again.',
        );
      }
    }
    // Through the link repository, so those watching links (the firewall) hear of it.
    this.o.store.links.unlinkAllOfAddon(row.id);
    this.o.store.addons.remove(row.id);
    this.serversChanged();
  }

  /** Names of the providers whose servers this daemon started or adopted. */
  startedProviders(): string[] {
    return [...this.started.keys()];
  }

  /**
   * The daemon lets go (SIGTERM, an upgrade): the servers run on in their own process groups
   * with their output in files, unwatched, and the next daemon adopts them (resumeAll) and
   * watches them again.
   */
  async detach(): Promise<void> {
    const started = [...this.started.entries()];
    this.started.clear();
    for (const [name, starting] of started) {
      const provider = await starting.catch(() => undefined);
      try {
        await provider?.detach();
      } catch (error) {
        this.o.log(`While letting go of the ${name} add-on servers: ${(error as Error).message}`);
      }
    }
  }

  /** `slipway system stop`: stops the servers of the providers that were started; data is kept. */
  async stop(): Promise<void> {
    const started = [...this.started.entries()];
    this.started.clear();
    for (const [name, starting] of started) {
      const provider = await starting.catch(() => undefined);
      if (!provider) continue;
      try {
        await provider.stop();
      } catch (error) {
        this.o.log(`While stopping the ${name} add-on servers: ${(error as Error).message}`);
      }
    }
  }
}
