import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Store } from '../store/store.js';
import { createApiServer } from '../api/server.js';
import type { DaemonOptions } from './options.js';
import { acquireDaemonLock, ensureDataDir } from './data-dir.js';
import { bootstrapIfEmpty } from './bootstrap.js';

/** Starts every room of the platform on one data folder and stops them in reverse order. */
export class Daemon {
  private store?: Store;
  private api?: Server;
  private lock?: { release(): void };
  private readonly stoppers: Array<() => Promise<void> | void> = [];

  constructor(private readonly options: DaemonOptions, private readonly log: (line: string) => void) {}

  async start(): Promise<{ apiUrl: string }> {
    const { options } = this;
    ensureDataDir(options.dataDir);
    this.lock = acquireDaemonLock(options.dataDir);
    this.stoppers.push(() => this.lock?.release());

    this.store = Store.open(join(options.dataDir, 'slipway.db'));
    this.stoppers.push(() => this.store?.close());
    const first = bootstrapIfEmpty(this.store, options.dataDir);

    const endpoints = { host: options.publicHost, sshPort: options.sshPort, routerPort: options.routerPort, domain: options.domain };
    this.api = createApiServer({ store: this.store, endpoints });
    const api = this.api;
    await new Promise<void>((resolve, reject) => {
      api.once('error', reject);
      api.listen(options.apiPort, options.listen, () => resolve());
    });
    this.stoppers.push(() => new Promise<void>((resolve) => { api.closeAllConnections(); api.close(() => resolve()); }));
    const port = (api.address() as AddressInfo).port;
    const apiUrl = `http://${options.listen.includes(':') ? `[${options.listen}]` : options.listen}:${port}`;

    this.log(`slipway API listening on ${apiUrl} (data folder ${options.dataDir})`);
    if (first.token) {
      this.log(`First start: created user "admin", organisation "default" and an API token (saved in ${first.tokenFile}).`);
      this.log(`Log in with: slipway login --url ${apiUrl} --token ${first.token}`);
    } else {
      this.log(`Log in with: slipway login --url ${apiUrl} --token "$(cat ${first.tokenFile})"`);
    }
    this.log('slipway is ready.');
    return { apiUrl };
  }

  async stop(): Promise<void> {
    while (this.stoppers.length) {
      const stop = this.stoppers.pop()!;
      try {
        await stop();
      } catch (error) {
        this.log(`While stopping: ${(error as Error).message}`);
      }
    }
  }
}
