import { runChecked } from '../../executor/run-captured.js';
import { chown, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AddonProvider, AddonRecord, ProvisionResult } from '../provider.js';
import { assertTraversable, ensureDir } from '../directories.js';
import { assertAddressAssigned, bindAddresses } from '../gateway.js';
import { randomPassword } from '../secrets.js';
import { ServerProcess, isOurServer, logTail, waitUntilReady } from '../server-process.js';
import { readPidFile } from '../../executor/pid-file.js';
import { quietSupervision, SupervisedServer, type SupervisionEvents } from '../server-supervisor.js';
import { ensureSystemUser, type SystemUser } from '../system-user.js';
import { SandboxCgroups } from '../../sandbox/cgroups.js';
import { DEFAULT_PLAN_LIMITS, describeRedisLimits, type RedisPlanLimits } from '../plan-limits.js';
import { giveFolderTo } from './folder-owner.js';
import { groupLimits, redisGroupName, runsInSandbox, sandboxedArgv, scratchGroupName } from './server-sandbox.js';
import { RedisServerUsers } from './server-users.js';
import { allocatePort, assertPortRange, portIsFree, type PortRange } from './port-allocation.js';
import { defaultUserRules, redisConf, redisServerArgv } from './redis-config.js';
import { RespError, respExchange } from './resp.js';

/** How many ports a new add-on tries when others are taken while its server starts. */
const PORT_ATTEMPTS = 4;

/** A control group for a throw-away server (RedisProvider.scratchGroup). */
export interface ScratchGroup {
  /** `<root>/<group>`, for messages. */
  name: string;
  /** The `cgroup.procs` files the server joins before it runs. */
  cgroupProcs: string[];
  remove(): void;
}

/**
 * Ten thousand ports, below the kernel's ephemeral range (32768-60999): ports are handed out per
 * server and opened per linked app (src/network), so the range only has to be large.
 */
export const DEFAULT_REDIS_PORT_RANGE: PortRange = [20000, 29999];
export const DEFAULT_REDIS_USER = 'slipway-redis';
export const REDIS_SERVER_BINARY = '/usr/bin/redis-server';

export interface RedisProviderOptions {
  /** slipway's data folder; each add-on lives in `<dataDir>/redis/<add-on id>`. */
  dataDir: string;
  /** Address apps reach the host at; injected as REDIS_HOST. */
  gatewayAddress: string;
  /** Ports handed to add-ons, both ends included. */
  portRange?: PortRange;
  /**
   * The one account of every server before per-add-on users (its folders are handed over at
   * the first start; redis/folder-owner.ts). Each add-on's server, and each throw-away copy of
   * it, now runs as the add-on's own user.
   */
  serverUser?: string;
  binary?: string;
  /** What each add-on's server may use (plan-limits.ts). */
  limits?: RedisPlanLimits;
  /** The control-group root the servers' groups live under (default `slipway-addons`). */
  cgroupRoot?: string;
}

/**
 * A redis-server process of its own per add-on, with its own password, port, data folder, unix
 * user and sandbox (server-sandbox.ts: the plan's memory in a control group and as maxmemory).
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
  private readonly users = new RedisServerUsers();
  private cgroupsOf: SandboxCgroups | undefined;

  constructor(private readonly options: RedisProviderOptions) {
    assertPortRange(this.portRange);
    bindAddresses(options.gatewayAddress); // validates the address
  }

  get planLimits(): RedisPlanLimits {
    return this.options.limits ?? DEFAULT_PLAN_LIMITS.redis;
  }

  get limits(): string {
    return describeRedisLimits(this.planLimits);
  }

  /** The servers' control groups (created on first use: reading the layout touches /sys). */
  get cgroups(): SandboxCgroups {
    this.cgroupsOf ??= new SandboxCgroups(this.options.cgroupRoot ?? 'slipway-addons');
    return this.cgroupsOf;
  }

  /** The unix user the add-on's server runs as (created when missing). */
  serverUserOf(id: string): Promise<SystemUser> {
    return this.users.ensure(id);
  }

  /**
   * A control group of its own, with the plan's limits, for a throw-away copy of the add-on's
   * server (a backup's verification or restore): it holds the copy as the live server's group
   * holds the server, without taking from the live server's memory. `remove` takes it away once
   * the copy has stopped.
   */
  scratchGroup(id: string): ScratchGroup {
    const group = scratchGroupName(id);
    this.cgroups.create(group, groupLimits(this.planLimits));
    return {
      name: `${this.cgroups.root}/${group}`,
      cgroupProcs: this.cgroups.processGroup(group),
      remove: () => this.cgroups.remove(group),
    };
  }

  private get portRange(): PortRange {
    return this.options.portRange ?? DEFAULT_REDIS_PORT_RANGE;
  }

  /** The redis-server program (backups start throw-away copies with it). */
  get binary(): string {
    return this.options.binary ?? REDIS_SERVER_BINARY;
  }

  /** The shared account of earlier versions. */
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
      this.requireStarted();
      const taken = new Set([...this.ports.values(), ...(await this.portsOnDisk())]);
      const hosts = bindAddresses(this.options.gatewayAddress);
      for (let attempt = 1; ; attempt++) {
        const port = await allocatePort(this.portRange, taken, hosts);
        const config = { port: String(port), password: randomPassword() };
        try {
          await this.launch(addon.id, config);
          return { config };
        } catch (err) {
          await rm(dir, { recursive: true, force: true });
          this.removeGroup(addon.id);
          await this.users.remove(addon.id).catch(() => undefined);
          // Another program (another daemon's add-on on loopback) took the port between the
          // check and the server's bind: the next free one is tried.
          if (attempt < PORT_ATTEMPTS && !(await portIsFree(port, hosts))) {
            taken.add(port);
            continue;
          }
          throw err;
        }
      }
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
      this.requireStarted();
      if (this.servers.get(addon.id)?.isSupervised()) return; // running, or being restarted
      await this.launch(addon.id, config);
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
      this.removeGroup(addon.id);
      await this.users.remove(addon.id);
    });
  }

  /** SIGTERM makes redis-server flush the AOF and write an RDB before it exits. */
  stop(): Promise<void> {
    return this.serialized(async () => {
      const servers = [...this.servers.entries()];
      this.servers.clear();
      this.ports.clear();
      await Promise.all(servers.map(([, server]) => server.stop('SIGTERM', 30_000)));
      // A clean stop leaves no control group behind (a detach leaves them to the servers).
      for (const [id] of servers) this.removeGroup(id);
      try {
        this.cgroups.removeRoot();
      } catch {
        // no control groups on this machine
      }
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

  private removeGroup(id: string): void {
    try {
      this.cgroups.remove(redisGroupName(id));
    } catch {
      // no control groups here (a machine without cgroups): nothing to remove
    }
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
  private async launch(id: string, config: Record<string, string>): Promise<void> {
    const server = await this.bringUp(id, config);
    const supervised = new SupervisedServer(server, {
      provider: this.name,
      addonId: id,
      label: server.label,
      // Not through the queue: stop() and deprovision() wait in it for a restart under way.
      relaunch: () => this.bringUp(id, config),
      events: () => this.events,
    });
    this.servers.set(id, supervised);
    this.ports.set(id, Number(need(config, 'port')));
  }

  /** The add-on's server running and answering: one left by an earlier daemon, or a new one. */
  private async bringUp(id: string, config: Record<string, string>): Promise<ServerProcess> {
    const dir = this.addonDir(id);
    const port = Number(need(config, 'port'));
    const password = need(config, 'password');
    const label = `the Redis server of add-on ${id}`;
    const user = await this.users.ensure(id);
    const group = redisGroupName(id);
    const plan = this.planLimits;

    let server = await this.findRunning(id); // left running by a daemon that did not stop it
    const adopted = server !== undefined;
    if (server && !runsInSandbox(server.pid, this.cgroups, group, user)) {
      // Started by a daemon from before per-add-on sandboxes: SIGTERM writes its data out, then
      // it starts again as its own user, in its own group.
      this.events.log(`Moving ${label} into its own sandbox (user ${user.name}): restarting it.`);
      await server.stop('SIGTERM', 30_000);
      server = undefined;
    }
    if (!server) {
      await assertTraversable(this.root, user);
      await giveFolderTo(this.root, id, user);
      const configFile = join(dir, 'redis.conf');
      const settings = { bind: bindAddresses(this.options.gatewayAddress), port, password, dir };
      const conf = redisConf({
        ...settings,
        maxmemoryBytes: plan.maxmemoryBytes,
        evictionPolicy: plan.evictionPolicy,
        scripting: plan.scripting,
      });
      await writeFile(configFile, conf, { mode: 0o600 });
      await chown(configFile, user.uid, user.gid);
      this.cgroups.create(group, groupLimits(plan));
      server = await ServerProcess.spawn(label, {
        argv: sandboxedArgv(user, redisServerArgv(this.binary, configFile)),
        cwd: dir,
        logFile: join(dir, 'redis.log'),
        cgroupProcs: this.cgroups.processGroup(group),
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
    // Answering means redis-server runs: whatever joined the groups before it ran is done.
    if (!runsInSandbox(started.pid, this.cgroups, group, user)) {
      await started.stop('SIGTERM', 5_000);
      throw new Error(`${label} did not start in its sandbox (control group ${group} under ${this.cgroups.root}, user ${user.name}).`);
    }
    if (adopted && server === started && !(await this.reapplyPlan(label, group, port, password))) {
      this.events.log(`Restarting ${label}: it runs an earlier plan (Lua scripting, maxmemory or its policy changed).`);
      await started.stop('SIGTERM', 30_000);
      return this.bringUp(id, config); // finds none running now: starts it with a new redis.conf
    }
    return started;
  }

  /**
   * An adopted server gets the plan again, as a started one gets it from its redis.conf: the
   * group's limits, and its rules and settings. A server started by an earlier version (no ACL
   * rules) takes them live (ACL SETUSER, CONFIG SET); one started with this version's rules
   * refuses both to everyone, so when what it runs differs from the plan (the operator changed
   * it since) it is restarted with a new redis.conf. Resolves false when it needs that restart;
   * any other failure is told, not fatal: the server serves on.
   */
  private async reapplyPlan(label: string, group: string, port: number, password: string): Promise<boolean> {
    const plan = this.planLimits;
    try {
      this.cgroups.create(group, groupLimits(plan));
    } catch (error) {
      // v1 refuses a memory limit below what the group uses now: it applies at the next start.
      this.events.log(
        `Could not apply the plan's memory limit to ${label} now (${(error as Error).message}); it applies at its next start.`,
      );
    }
    const failed = (error: Error) => [new RespError(error.message)];
    const settings = liveSettings(plan);
    // CONFIG SET first: the rules refuse it once they apply.
    const [auth, config, acl] = await respExchange('127.0.0.1', port, [
      ['AUTH', password],
      ['CONFIG', 'SET', ...settings.flat()],
      ['ACL', 'SETUSER', 'default', 'reset', ...defaultUserRules(password, plan.scripting)],
    ]).catch(failed);
    if (auth instanceof RespError) {
      this.events.log(`Could not apply the plan to ${label}: ${auth.message}`);
      return true;
    }
    if (!(acl instanceof RespError) && !(config instanceof RespError)) return true;
    // Refused: its rules are this version's. Does it run what the plan says now?
    const [, running, dryRun] = await respExchange('127.0.0.1', port, [
      ['AUTH', password],
      ['CONFIG', 'GET', ...settings.map(([name]) => name)],
      ['ACL', 'DRYRUN', 'default', 'EVAL', 'return 1', '0'],
    ]).catch(failed);
    if (running instanceof RespError || !Array.isArray(running)) {
      this.events.log(`Could not read the settings of ${label}: ${running instanceof RespError ? running.message : 'no answer'}`);
      return true;
    }
    return runsPlan(settings, running, dryRun, plan.scripting);
  }
}

/** The settings an adopted server is given live (CONFIG SET name value…), as redis.conf has them. */
function liveSettings(plan: RedisPlanLimits): Array<[string, string]> {
  return [
    ['sanitize-dump-payload', 'yes'],
    ['maxmemory', String(plan.maxmemoryBytes)],
    ['maxmemory-policy', plan.evictionPolicy],
  ];
}

/**
 * Whether a server's CONFIG GET answer (name, value, …) and its ACL DRYRUN of an EVAL ("OK" when
 * allowed) match the plan.
 */
export function runsPlan(wanted: Array<[string, string]>, configGet: unknown[], dryRun: unknown, scripting: boolean): boolean {
  const running = new Map<string, string>();
  for (let i = 0; i + 1 < configGet.length; i += 2) running.set(String(configGet[i]), String(configGet[i + 1]));
  return wanted.every(([name, value]) => running.get(name) === value) && (dryRun === 'OK') === scripting;
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
