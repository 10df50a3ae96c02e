import { runChecked } from '../../executor/run-captured.js';
import { chown, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AddonProvider, AddonRecord, ProvisionResult } from '../provider.js';
import { assertTraversable, ensureDir } from '../directories.js';
import { assertAddressAssigned, bindAddresses } from '../gateway.js';
import { randomPassword } from '../secrets.js';
import { ServerProcess, isOurServer, logTail, readPidFile, waitUntilReady } from '../server-process.js';
import { quietSupervision, SupervisedServer, type SupervisionEvents } from '../server-supervisor.js';
import { ensureSystemUser, type SystemUser } from '../system-user.js';
import { allocatePort, assertPortRange, type PortRange } from './port-allocation.js';
import { redisConf, redisServerArgv } from './redis-config.js';
import { RespError, respExchange } from './resp.js';

export const DEFAULT_REDIS_PORT_RANGE: PortRange = [6400, 6499];
export const DEFAULT_REDIS_USER = 'slipway-redis';
export const REDIS_SERVER_BINARY = '/usr/bin/redis-server';

export interface RedisProviderOptions {
  /** slipway's data folder; each add-on lives in `<dataDir>/redis/<add-on id>`. */
  dataDir: string;
  /** Address apps reach the host at; injected as REDIS_HOST. */
  gatewayAddress: string;
  /** Ports handed to add-ons, both ends included. */
  portRange?: PortRange;
  serverUser?: string;
  binary?: string;
}

/**
 * A redis-server process of its own per add-on, with its own password, port and data folder.
 * A server that dies is restarted (SupervisedServer) and reloads its AOF (redis-config.ts).
 */
export class RedisProvider implements AddonProvider {
  readonly name = 'redis';
  readonly description = 'Redis: a Redis server of its own with a password and persistent data (AOF)';
  private readonly servers = new Map<string, SupervisedServer>();
  private events: SupervisionEvents = quietSupervision;
  private readonly ports = new Map<string, number>();
  private user: SystemUser | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: RedisProviderOptions) {
    assertPortRange(this.portRange);
    bindAddresses(options.gatewayAddress); // validates the address
  }

  private get portRange(): PortRange {
    return this.options.portRange ?? DEFAULT_REDIS_PORT_RANGE;
  }

  /** The redis-server program (backups start throw-away copies with it). */
  get binary(): string {
    return this.options.binary ?? REDIS_SERVER_BINARY;
  }

  /** The account the servers run as. */
  get serverUser(): string {
    return this.options.serverUser ?? DEFAULT_REDIS_USER;
  }

  private get root(): string {
    return join(this.options.dataDir, 'redis');
  }

  async start(): Promise<void> {
    if (this.user) return;
    try {
      await runChecked([this.binary, '--version']);
    } catch {
      throw new Error(`Cannot run ${this.binary}: install it with "apt-get install redis-server".`);
    }
    await assertAddressAssigned(this.options.gatewayAddress);
    const user = await ensureSystemUser(this.serverUser);
    await assertTraversable(this.options.dataDir, user);
    await ensureDir(this.root, 0o755);
    this.user = user;
  }

  /** Port choice and process start happen one add-on at a time so two add-ons never get one port. */
  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work, work);
    this.queue = result.catch(() => undefined);
    return result;
  }

  async provision(addon: AddonRecord): Promise<ProvisionResult> {
    const dir = this.addonDir(addon.id);
    return this.serialized(async () => {
      const user = this.requireStarted();
      const taken = new Set([...this.ports.values(), ...(await this.portsOnDisk())]);
      const port = await allocatePort(this.portRange, taken, bindAddresses(this.options.gatewayAddress));
      const config = { port: String(port), password: randomPassword() };
      try {
        await this.launch(addon.id, config, user);
      } catch (err) {
        await rm(dir, { recursive: true, force: true });
        throw err;
      }
      return { config };
    });
  }

  env(config: Record<string, string>): Record<string, string> {
    const host = this.options.gatewayAddress;
    const port = need(config, 'port');
    const password = need(config, 'password');
    return {
      REDIS_HOST: host,
      REDIS_PORT: port,
      REDIS_PASSWORD: password,
      REDIS_URL: `redis://:${encodeURIComponent(password)}@${host}:${port}`,
    };
  }

  resume(addon: Pick<AddonRecord, 'id'>, config: Record<string, string>): Promise<void> {
    return this.serialized(async () => {
      const user = this.requireStarted();
      if (this.servers.get(addon.id)?.isSupervised()) return; // running, or being restarted
      await this.launch(addon.id, config, user);
    });
  }

  async deprovision(addon: Pick<AddonRecord, 'id'>, _config: Record<string, string>): Promise<void> {
    const dir = this.addonDir(addon.id);
    return this.serialized(async () => {
      const server = this.servers.get(addon.id) ?? (await this.findRunning(addon.id));
      await server?.stop('SIGTERM', 30_000); // no restart once this begins
      this.servers.delete(addon.id);
      this.ports.delete(addon.id);
      await rm(dir, { recursive: true, force: true });
    });
  }

  /** SIGTERM makes redis-server flush the AOF and write an RDB before it exits. */
  stop(): Promise<void> {
    return this.serialized(async () => {
      const servers = [...this.servers.values()];
      this.servers.clear();
      this.ports.clear();
      await Promise.all(servers.map((server) => server.stop('SIGTERM', 30_000)));
    });
  }

  /** The servers serve on; the next daemon finds each by its pid file (findRunning). */
  detach(): Promise<void> {
    return this.serialized(async () => {
      for (const server of this.servers.values()) server.detach();
      this.servers.clear();
      this.ports.clear();
    });
  }

  superviseWith(events: SupervisionEvents): void {
    this.events = events;
  }

  /** Folder of one add-on; the id comes from the store but is checked before it reaches a path. */
  addonDir(id: string): string {
    if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(id)) {
      throw new Error(`Add-on id "${id}" cannot name a folder (letters, digits, "_" and "-" only).`);
    }
    return join(this.root, id);
  }

  /**
   * Ports written in the config files of every add-on folder: an add-on whose server is not
   * running (not resumed yet, or failed to start) keeps its port.
   */
  private async portsOnDisk(): Promise<number[]> {
    const ports: number[] = [];
    for (const entry of await readdir(this.root).catch(() => [] as string[])) {
      const text = await readFile(join(this.root, entry, 'redis.conf'), 'utf8').catch(() => '');
      const match = /^port (\d+)$/m.exec(text);
      if (match) ports.push(Number(match[1]));
    }
    return ports;
  }

  private requireStarted(): SystemUser {
    if (!this.user) throw new Error('The redis add-on provider is not started: call start() first.');
    return this.user;
  }

  private async findRunning(id: string): Promise<ServerProcess | undefined> {
    const dir = this.addonDir(id);
    const pid = await readPidFile(join(dir, 'redis.pid'));
    if (pid === undefined || !(await isOurServer(pid, 'redis', dir))) return undefined;
    return ServerProcess.adopt(`the Redis server of add-on ${id}`, pid);
  }

  /** Starts (or adopts) the add-on's server and watches it: restarted whenever it dies. */
  private async launch(id: string, config: Record<string, string>, user: SystemUser): Promise<void> {
    const server = await this.bringUp(id, config, user);
    const supervised = new SupervisedServer(server, {
      provider: this.name,
      addonId: id,
      label: server.label,
      // Not through the queue: stop() and deprovision() wait in it for a restart under way.
      relaunch: () => this.bringUp(id, config, user),
      events: () => this.events,
    });
    this.servers.set(id, supervised);
    this.ports.set(id, Number(need(config, 'port')));
  }

  /** The add-on's server running and answering: one left by an earlier daemon, or a new one. */
  private async bringUp(id: string, config: Record<string, string>, user: SystemUser): Promise<ServerProcess> {
    const dir = this.addonDir(id);
    const port = Number(need(config, 'port'));
    const password = need(config, 'password');
    const label = `the Redis server of add-on ${id}`;

    let server = await this.findRunning(id); // left running by a daemon that did not stop it
    if (!server) {
      await ensureDir(dir, 0o700, user);
      const configFile = join(dir, 'redis.conf');
      await writeFile(configFile, redisConf({ bind: bindAddresses(this.options.gatewayAddress), port, password, dir }), { mode: 0o600 });
      await chown(configFile, user.uid, user.gid);
      server = await ServerProcess.spawn(label, {
        argv: redisServerArgv(this.binary, configFile),
        user,
        cwd: dir,
        logFile: join(dir, 'redis.log'),
      });
    }
    const logFile = join(dir, 'redis.log');
    const started = server;
    await waitUntilReady(
      started,
      () => answersPing('127.0.0.1', port, password),
      30_000,
      async (reason) => {
        await started.stop('SIGTERM', 5_000);
        return new Error(`Redis add-on ${id} did not start: ${reason}. Last lines of ${logFile}:\n${await logTail(logFile)}`);
      },
    );
    return started;
  }
}

/** AUTH then PING; false while Redis still loads its data (-LOADING). */
async function answersPing(host: string, port: number, password: string): Promise<boolean> {
  const [auth, ping] = await respExchange(host, port, [['AUTH', password], ['PING']], 2000);
  if (auth instanceof RespError) throw new Error(`AUTH was refused: ${auth.message}`);
  return ping === 'PONG';
}

function need(config: Record<string, string>, key: string): string {
  const value = config[key];
  if (!value) throw new Error(`The stored Redis add-on configuration has no "${key}"; it may be from another provider.`);
  return value;
}
