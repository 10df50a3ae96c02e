import { startEdge } from './stages/edge.js';
import { startNetwork } from './stages/network.js';
import { logReady } from './ready-log.js';
import { startSandboxes } from './stages/sandboxes.js';
import { addonWatch } from './stages/addon-watch.js';
import { api } from './stages/api.js';
import { appLogs } from './stages/app-logs.js';
import { autoscaling } from './stages/autoscaling.js';
import { backups } from './stages/backups.js';
import { certificates } from './stages/certificates.js';
import { cron } from './stages/cron.js';
import { dataFolder } from './stages/data-folder.js';
import { deployments } from './stages/deployments.js';
import { diskMetrics } from './stages/disk-metrics.js';
import { drains } from './stages/drains.js';
import { egress } from './stages/egress.js';
import { events } from './stages/events.js';
import { gitServer } from './stages/git-server.js';
import { notifications } from './stages/notifications.js';
import { platformBackups } from './stages/platform-backups.js';
import { quotas } from './stages/quotas.js';
import { restoredReleases } from './stages/restored-releases.js';
import { resume } from './stages/resume.js';
import { serving } from './stages/serving.js';
import { type DaemonBase, stage } from './stages/stage.js';
import { openStore } from './stages/store.js';
import { toolchainCache } from './stages/toolchain-cache.js';
import { Lifecycle } from './lifecycle.js';
import type { DaemonOptions } from './options.js';
import { type StopScope, Stoppers } from './stoppers.js';

export type { StopScope } from './stoppers.js';

/**
 * Starts every room of the platform on one data folder and stops them in reverse order. The
 * start is a list of stages (src/daemon/README.md draws them): each builds one thing from what
 * the stages before it provided and registers its own stop, so a start that fails half-way
 * stops exactly what it built.
 */
export class Daemon {
  private readonly stoppers = new Stoppers();
  private markSystemStopped: () => void = () => undefined;
  /** Resolves once `slipway system stop` has stopped the data plane: the daemon then stops too. */
  readonly systemStopped = new Promise<void>((resolve) => (this.markSystemStopped = resolve));

  constructor(
    private readonly options: DaemonOptions,
    private readonly log: (line: string) => void,
  ) {}

  async start(): Promise<{ apiUrl: string }> {
    const base: DaemonBase = {
      options: this.options,
      log: this.log,
      stoppers: this.stoppers,
      lifecycle: new Lifecycle(this.log),
      markSystemStopped: () => this.markSystemStopped(),
    };
    const started = await Promise.resolve(base)
      .then(stage(dataFolder)) // locked, restored from a backup first with --restore-from
      .then(stage(openStore)) // the store, its secrets, the first admin, interrupted deployments
      .then(stage(startSandboxes)) // this machine's sandboxes, the apps' users and filesystems
      .then(stage(restoredReleases)) // with --restore-from, before any release starts
      .then(stage(startNetwork)) // the bridge, its firewall, the add-on servers, the swarm
      .then(stage(events)) // what people are told about
      .then(stage(startEdge)) // the router, ACME challenges, traffic records, metrics endpoint
      .then(stage(toolchainCache))
      .then(stage(appLogs))
      .then(stage(egress)) // the guard of the daemon's own connections
      .then(stage(drains))
      .then(stage(quotas))
      .then(stage(notifications))
      .then(stage(addonWatch)) // database sizes, add-on servers restarted
      .then(stage(backups))
      .then(stage(platformBackups))
      .then(stage(serving)) // the apps' instances, liveness checks
      .then(stage(certificates))
      .then(stage(deployments))
      .then(stage(autoscaling)) // instance counts and flavours from measured load
      .then(stage(gitServer))
      .then(stage(cron)) // one-off commands and cron jobs
      .then(stage(diskMetrics))
      .then(stage(api)) // the API and the web console
      .then(stage(resume)); // the platform serves again: add-ons, apps, deployments, cron
    const { apiUrl, sshPort, certificates: certs, first } = started;
    logReady(this.log, this.options, { apiUrl, sshPort, caCertificatePath: certs.caCertificatePath, first });
    return { apiUrl };
  }

  async stop(scope: StopScope = 'all'): Promise<void> {
    await this.stoppers.stopAll(scope, this.log);
  }
}
