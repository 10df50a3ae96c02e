import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { RespError } from '../../addons/redis/resp.js';
import type { BackupStore } from '../store/backup-store.js';
import type { RedisConnection } from './resp-connection.js';
import { text } from './resp-connection.js';
import { parseInfo, saveState, totalKeys, type SaveState } from './redis-info.js';

/** Writes wait at most this long for the snapshot's fork (Redis lifts the pause by itself then). */
const PAUSE_MS = 10_000;

/**
 * The commands that start a snapshot whose key count is known exactly: writes (and expiries)
 * pause, the keys of every database are counted, BGSAVE forks, writes go on. Redis runs one
 * client's pipelined commands in order and no other client writes in between, so the fork sees
 * the keyspace INFO counted. (BGSAVE inside MULTI/EXEC would not do: Redis 7 only schedules it
 * there, and forks later, after other clients' writes.)
 */
export function snapshotCommands(): string[][] {
  return [['CLIENT', 'PAUSE', String(PAUSE_MS), 'WRITE'], ['INFO', 'persistence'], ['INFO', 'keyspace'], ['BGSAVE'], ['CLIENT', 'UNPAUSE']];
}

/** What BGSAVE said: started, or why not now (another save or rewrite is running) or never. */
export function bgsaveAnswer(reply: unknown): 'started' | 'busy' | Error {
  if (reply === 'Background saving started') return 'started';
  if (reply instanceof RespError) {
    if (/already in progress|Another child process is active/i.test(reply.message)) return 'busy';
    return new Error(`Redis refused BGSAVE: ${reply.message}`);
  }
  return new Error(`Redis answered BGSAVE with ${JSON.stringify(reply)} instead of starting it.`);
}

export interface RedisSnapshot {
  keys: number;
  sizeBytes: number;
  createdAt: Date;
}

export interface SnapshotSource {
  /** The live server, authenticated. */
  connection: RedisConnection;
  /** dump.rdb in the add-on's folder, where BGSAVE writes. */
  rdbFile: string;
  /** The server's account: the file must be its own. */
  uid: number;
  timeoutMs?: number;
}

/**
 * Makes the live server write a snapshot with a known key count and streams that file into the
 * store under `key`. The file is only taken when no other snapshot replaced it since ours (the
 * save counter has not moved), else the whole round is tried again.
 */
export async function takeSnapshot(source: SnapshotSource, store: BackupStore, key: string): Promise<RedisSnapshot> {
  const deadline = Date.now() + (source.timeoutMs ?? 600_000);
  for (let attempt = 1; ; attempt++) {
    const round = await snapshotRound(source, deadline);
    if (round === 'again') {
      if (attempt >= 5) throw new Error('Redis kept writing other snapshots over ours; try again later.');
      continue;
    }
    try {
      const { sizeBytes } = await store.put(key, round.file.createReadStream());
      return { keys: round.keys, sizeBytes, createdAt: round.createdAt };
    } catch (error) {
      await store.delete(key).catch(() => undefined);
      throw new Error(`The snapshot could not be stored: ${(error as Error).message}`);
    } finally {
      await round.file.close().catch(() => undefined);
    }
  }
}

async function snapshotRound(
  source: SnapshotSource,
  deadline: number,
): Promise<{ file: FileHandle; keys: number; createdAt: Date } | 'again'> {
  const { connection } = source;
  for (;;) {
    const createdAt = new Date();
    const [paused, persistence, keys, bgsave, unpaused] = await connection.send(snapshotCommands());
    for (const [reply, what] of [
      [paused, 'CLIENT PAUSE'],
      [unpaused, 'CLIENT UNPAUSE'],
    ] as const) {
      if (reply instanceof RespError) throw new Error(`Redis refused ${what}: ${reply.message}`);
    }
    const before = saveState(parseInfo(text(persistence ?? null, 'INFO persistence')));
    const count = totalKeys(parseInfo(text(keys ?? null, 'INFO keyspace')));
    const answer = bgsaveAnswer(bgsave);
    if (answer instanceof Error) throw answer;
    if (answer === 'busy') {
      await waitForSave(connection, deadline, (s) => !s.inProgress && !s.otherChild);
      continue;
    }
    const done = await waitForSave(connection, deadline, (s) => !s.inProgress);
    if (done.lastStatus !== 'ok') {
      throw new Error(`Redis could not write the snapshot (rdb_last_bgsave_status:${done.lastStatus}); its log says why.`);
    }
    if (done.saves !== before.saves + 1 || done.lastSave < Math.floor(createdAt.getTime() / 1000)) return 'again';
    const file = await openOwnFile(source.rdbFile, source.uid);
    // Another snapshot started since ours finished may have replaced the file before it was opened.
    const after = await persistenceState(connection);
    if (after.inProgress || after.saves !== done.saves || after.lastSave !== done.lastSave) {
      await file.close();
      return 'again';
    }
    return { file, keys: count, createdAt };
  }
}

async function persistenceState(connection: RedisConnection): Promise<SaveState> {
  return saveState(parseInfo(text(await connection.call('INFO', 'persistence'), 'INFO persistence')));
}

async function waitForSave(connection: RedisConnection, deadline: number, ready: (s: SaveState) => boolean): Promise<SaveState> {
  for (;;) {
    const state = await persistenceState(connection);
    if (ready(state)) return state;
    if (Date.now() > deadline) throw new Error('Redis was still writing a snapshot when the time for the backup ran out.');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Opens the snapshot the server wrote in its folder as root would not open just anything there:
 * never through a link (O_NOFOLLOW), never blocking on a FIFO (O_NONBLOCK), and only a regular
 * file of the server's account with no other name.
 */
export async function openOwnFile(path: string, uid: number): Promise<FileHandle> {
  const file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ELOOP') throw new Error(`${path} is a symbolic link, not the snapshot Redis wrote.`);
    throw new Error(`The snapshot Redis wrote cannot be opened: ${error.message}`);
  });
  const stat = await file.stat();
  const wrong = !stat.isFile()
    ? 'is not a regular file'
    : stat.uid !== uid
      ? `belongs to uid ${stat.uid}, not to the Redis server's account`
      : stat.nlink !== 1
        ? 'has other names (hard links)'
        : undefined;
  if (wrong) {
    await file.close();
    throw new Error(`${path} ${wrong}: it is not the snapshot Redis wrote.`);
  }
  return file;
}
