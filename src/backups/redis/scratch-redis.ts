import { constants } from 'node:fs';
import { endScratchServer, isolatedAs } from '../scratch-server.js';
import { chown, mkdir, open, readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { startServer, type StartedServer } from '../../executor/start-server.js';
import type { SystemUser } from '../../addons/system-user.js';
import { RespError } from '../../addons/redis/resp.js';
import { RedisConnection, text } from './resp-connection.js';
import { loadFailure, loadedKeys, parseInfo } from './redis-info.js';

/** The snapshot's name inside the throw-away server's folder. */
const RDB = 'snapshot.rdb';
const SOCKET = 'redis.sock';
/** A unix socket's path must fit in sockaddr_un (108 bytes with its NUL). */
const MAX_SOCKET_PATH = 107;

export interface ScratchRedisOptions {
  /** Folder under which the throw-away server gets a folder of its own (root's, 0711). */
  scratchRoot: string;
  /** The add-on's own server user: a copy of its data runs as the add-on's server does. */
  user: SystemUser;
  /** A control group of its own with the plan's limits (RedisProvider.scratchGroup), removed with the copy. */
  group?: { cgroupProcs: string[]; remove(): void };
  binary: string;
  /** The snapshot (an RDB file), as the backup store gives it back. */
  snapshot: Readable;
  timeoutMs?: number;
}

/**
 * redis-server's argv for a throw-away copy: its own empty network namespace (unshare), the
 * server account (setpriv), no TCP listener, a unix socket in its own folder, no AOF and no
 * snapshot of its own; it loads `dbfilename` from `dir` at start.
 */
export function scratchRedisArgv(binary: string, user: { uid: number; gid: number }, dataDir: string): string[] {
  return isolatedAs(user, [
    binary,
    '--port',
    '0',
    '--unixsocket',
    join(dataDir, SOCKET),
    '--unixsocketperm',
    '700',
    '--dir',
    dataDir,
    '--dbfilename',
    RDB,
    // The snapshot is checked whole as it loads, as the add-on's own server checks payloads.
    '--sanitize-dump-payload',
    'yes',
    '--appendonly',
    'no',
    '--save',
    '',
    '--daemonize',
    'no',
    '--logfile',
    '',
  ]);
}

/**
 * A redis-server loaded from a snapshot in a folder of its own, with no network at all: its own
 * network namespace, no TCP listener, a unix socket in a folder only root and the server account
 * can enter. Verifications and restores read from it; remove() leaves nothing behind.
 */
export class ScratchRedis {
  private server: StartedServer | undefined;
  private exited: Promise<void> | undefined;

  private constructor(
    readonly folder: string,
    private group: ScratchRedisOptions['group'],
  ) {}

  /** The server's process id while it runs. */
  get pid(): number | undefined {
    return this.server?.pid;
  }

  get dataDir(): string {
    return join(this.folder, 'data');
  }

  get socket(): string {
    return join(this.dataDir, SOCKET);
  }

  private get logFile(): string {
    return join(this.folder, 'redis.log');
  }

  /** Starts a copy on the snapshot; rejects with what redis-server logged when it does not load. */
  static async load(o: ScratchRedisOptions): Promise<ScratchRedis> {
    const scratch = new ScratchRedis(join(o.scratchRoot, `redis-${randomBytes(6).toString('hex')}`), o.group);
    if (scratch.socket.length > MAX_SOCKET_PATH) {
      o.snapshot.destroy();
      await scratch.remove();
      throw new Error(`The scratch folder's socket path ${scratch.socket} is too long for a unix socket; use a shorter data folder.`);
    }
    try {
      await mkdir(o.scratchRoot, { recursive: true, mode: 0o711 });
      await scratch.prepare(o);
      await scratch.start(o);
      return scratch;
    } catch (error) {
      o.snapshot.destroy();
      await scratch.remove();
      throw error;
    }
  }

  /**
   * The folder is root's (the log is written there); `data/` holds the snapshot and the socket
   * and is handed to the server account only once the snapshot is in, so nothing the account
   * does can put a link where root writes.
   */
  private async prepare(o: ScratchRedisOptions): Promise<void> {
    await mkdir(this.folder, { mode: 0o750 });
    await chown(this.folder, 0, o.user.gid);
    await mkdir(this.dataDir, { mode: 0o700 });
    const file = join(this.dataDir, RDB);
    const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    await pipeline(o.snapshot, handle.createWriteStream());
    await chown(file, o.user.uid, o.user.gid);
    await chown(this.dataDir, o.user.uid, o.user.gid);
  }

  private async start(o: ScratchRedisOptions): Promise<void> {
    // unshare needs root; setpriv then drops to the server's account for redis-server itself.
    const server = await startServer({
      argv: scratchRedisArgv(o.binary, o.user, this.dataDir),
      cwd: this.dataDir,
      env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' },
      logFile: this.logFile,
      cgroupProcs: o.group?.cgroupProcs,
    });
    this.server = server;
    let ended = false;
    this.exited = server.exited.then(() => {
      ended = true;
    });
    const deadline = Date.now() + (o.timeoutMs ?? 600_000);
    for (;;) {
      if (ended)
        throw new Error(`redis-server did not load the snapshot: ${loadFailure(await readFile(this.logFile, 'utf8').catch(() => ''))}`);
      const answer = await this.ping().catch(() => undefined);
      if (answer === 'PONG') return;
      if (Date.now() > deadline) throw new Error('redis-server was still loading the snapshot when its time ran out.');
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** PONG once the data is loaded (-LOADING before). */
  private async ping(): Promise<string> {
    const connection = await RedisConnection.open({ path: this.socket }, { connectMs: 2000, idleMs: 2000 });
    try {
      const [reply] = await connection.send([['PING']]);
      return reply instanceof RespError ? reply.message : text(reply ?? null, 'PING');
    } finally {
      connection.close();
    }
  }

  connect(): Promise<RedisConnection> {
    return RedisConnection.open({ path: this.socket });
  }

  /** The keys the snapshot held: loaded, and dropped while loading because their TTL had run out. */
  async loaded(): Promise<{ loaded: number; expired: number }> {
    const connection = await this.connect();
    try {
      const info = parseInfo(text(await connection.call('INFO', 'persistence'), 'INFO persistence'));
      if (info.get('loading') !== '0') throw new Error('redis-server says it is still loading the snapshot.');
      return loadedKeys(info);
    } finally {
      connection.close();
    }
  }

  /** Stops the server (SIGTERM; it saves nothing), then its folder and its control group go. Safe to call more than once. */
  async remove(): Promise<void> {
    const server = this.server;
    const group = this.group;
    this.server = undefined;
    this.group = undefined;
    await endScratchServer(server, this.exited, 'SIGTERM', this.folder);
    group?.remove();
  }
}
