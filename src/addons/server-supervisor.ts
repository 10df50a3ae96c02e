import { DEFAULT_BACKOFF, RestartBackoff, type BackoffPolicy } from '../executor/restart-backoff.js';
import type { ServerProcess } from './server-process.js';

/**
 * Restarts an add-on server that died (crash, OOM kill, kill -9) while this daemon runs; why
 * the daemon is the supervisor, and not a process of its own beside each server, is in
 * README.md ("Who restarts a server").
 */

/** A restart done: the daemon logs it, counts it in /metrics and tells the apps linked to it. */
export interface ServerRestart {
  /** The provider's name: `postgresql`, `redis`. */
  provider: string;
  /** The add-on whose own server it is; absent for a server every add-on of the provider shares. */
  addonId?: string;
  label: string;
  /** How the previous process ended, e.g. `killed by SIGKILL`. */
  previousExit: string;
  pid: number;
}

/** Who hears of supervision: the daemon's output, and each restart. */
export interface SupervisionEvents {
  log(line: string): void;
  restarted(restart: ServerRestart): void;
}

export const quietSupervision: SupervisionEvents = { log: () => undefined, restarted: () => undefined };

export interface SupervisedServerOptions {
  provider: string;
  addonId?: string;
  label: string;
  /**
   * Starts the server again after it died and resolves once it answers; rejects (having
   * stopped what it started) when it does not, and is then called again after a longer delay.
   */
  relaunch(): Promise<ServerProcess>;
  /** Called once a relaunched server is the one watched (its owner may then talk to it). */
  restarted?(): void;
  /** Read at each event, so hooks set after the server started (AddonManager) are heard. */
  events(): SupervisionEvents;
  /** Delays before a restart; defaults to the instances' (1 s doubling to 30 s, reset after 60 s up). */
  backoff?: Partial<BackoffPolicy>;
}

type State = 'watching' | 'stopped' | 'detached';

/** One server under watch: the process now running it, and what happens when it dies. */
export class SupervisedServer {
  private current: ServerProcess;
  private state: State = 'watching';
  private upSince = 0;
  private timer: NodeJS.Timeout | undefined;
  private relaunching: Promise<void> | undefined;
  private readonly backoff: RestartBackoff;
  /** Restarts done since this daemon started watching. */
  restarts = 0;

  constructor(
    first: ServerProcess,
    private readonly o: SupervisedServerOptions,
  ) {
    this.backoff = new RestartBackoff({ ...DEFAULT_BACKOFF, ...o.backoff });
    this.current = first;
    this.watch(first);
  }

  get pid(): number {
    return this.current.pid;
  }

  /** True while the process is up (false between a crash and the restart). */
  isUp(): boolean {
    return this.current.isRunning();
  }

  /** True until stop() or detach(): a server that died is still this supervisor's to restart. */
  isSupervised(): boolean {
    return this.state === 'watching';
  }

  /** `system stop`, or the add-on deleted: no restart any more, then the server stops. */
  async stop(signal: NodeJS.Signals, graceMs: number): Promise<void> {
    this.state = 'stopped';
    clearTimeout(this.timer);
    await this.relaunching;
    await this.current.stop(signal, graceMs);
  }

  /** The daemon lets go (SIGTERM): the server runs on, unwatched, for the next daemon to adopt. */
  detach(): void {
    this.state = 'detached';
    clearTimeout(this.timer);
    this.current.release(); // a restart under way is released when it lands (relaunch)
  }

  private watch(server: ServerProcess): void {
    this.current = server;
    this.upSince = Date.now();
    void server.exited.then(() => this.died(server));
  }

  private died(server: ServerProcess): void {
    if (this.state !== 'watching' || server !== this.current) return;
    const upMs = Date.now() - this.upSince;
    const delay = this.backoff.nextDelay(upMs);
    this.o
      .events()
      .log(
        `${capitalized(this.o.label)} ${server.describeExit()} (pid ${server.pid}, up ${seconds(upMs)}); restarting it in ${seconds(delay)}.`,
      );
    this.schedule(delay, server.describeExit());
  }

  private schedule(delayMs: number, previousExit: string): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.relaunching = this.relaunch(previousExit)
        // A listener's fault must not end the daemon (an unhandled rejection would).
        .catch((error: Error) => this.o.events().log(`After restarting ${this.o.label}: ${error.message}`))
        .finally(() => (this.relaunching = undefined));
    }, delayMs);
  }

  private async relaunch(previousExit: string): Promise<void> {
    let server: ServerProcess;
    try {
      server = await this.o.relaunch();
    } catch (error) {
      if (this.state !== 'watching') return;
      const delay = this.backoff.nextDelay(0);
      this.o
        .events()
        .log(`${capitalized(this.o.label)} could not be restarted: ${(error as Error).message}. Trying again in ${seconds(delay)}.`);
      this.schedule(delay, previousExit);
      return;
    }
    this.watch(server);
    if (this.state === 'detached') server.release();
    if (this.state !== 'watching') return; // stop() stops it once this returns
    this.restarts++;
    this.o.restarted?.();
    const events = this.o.events();
    events.log(`${capitalized(this.o.label)} restarted: now pid ${server.pid} (the previous process ${previousExit}).`);
    events.restarted({ provider: this.o.provider, addonId: this.o.addonId, label: this.o.label, previousExit, pid: server.pid });
  }
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}
