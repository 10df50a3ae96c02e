import { type BinaryReply, type Command, RespError } from '../../addons/redis/resp.js';
import { type RedisConnection, text } from './resp-connection.js';
import { keyspace, parseInfo } from './redis-info.js';

/** Keys asked for per SCAN, and so per round trip of DUMPs and of RESTOREs. */
const BATCH = 500;

/**
 * The RESTORE of one key read with DUMP and PEXPIRETIME: its absolute expiry kept (ABSTTL), so a
 * key restored later expires when it would have; undefined for a key gone meanwhile (-2, or no
 * payload). REPLACE: SCAN may give a key twice.
 */
export function restoreCommand(key: Buffer, payload: BinaryReply, expiresAt: BinaryReply): Command | undefined {
  if (!Buffer.isBuffer(payload) || expiresAt === -2) return undefined;
  if (typeof expiresAt !== 'number') throw new Error(`PEXPIRETIME answered ${JSON.stringify(expiresAt)}.`);
  return expiresAt === -1 ? ['RESTORE', key, '0', payload, 'REPLACE'] : ['RESTORE', key, String(expiresAt), payload, 'REPLACE', 'ABSTTL'];
}

/**
 * Copies every key of every database of `from` (a server nobody else writes to) into `into`,
 * in batches: SCAN, then DUMP and PEXPIRETIME of the batch in one round trip, then its RESTOREs
 * in one. Resolves with the number of keys written.
 */
export async function copyKeys(from: RedisConnection, into: RedisConnection): Promise<number> {
  const dbs = [...keyspace(parseInfo(text(await from.call('INFO', 'keyspace'), 'INFO keyspace'))).keys()].sort((a, b) => a - b);
  let copied = 0;
  for (const db of dbs) {
    await from.call('SELECT', String(db));
    await into.call('SELECT', String(db));
    let cursor = '0';
    do {
      const scanned = await from.call('SCAN', cursor, 'COUNT', String(BATCH));
      if (!Array.isArray(scanned) || scanned.length !== 2 || !Array.isArray(scanned[1])) {
        throw new Error(`SCAN answered ${JSON.stringify(scanned)}.`);
      }
      cursor = text(scanned[0]!, 'SCAN');
      const keys = scanned[1].filter((k): k is Buffer => Buffer.isBuffer(k));
      if (keys.length === 0) continue;
      const read = await from.send(
        keys.flatMap((key) => [
          ['DUMP', key],
          ['PEXPIRETIME', key],
        ]),
      );
      const restores: Command[] = [];
      keys.forEach((key, i) => {
        const payload = read[2 * i] ?? null;
        if (payload instanceof RespError) throw new Error(`DUMP of a key of database ${db} failed: ${payload.message}`);
        const command = restoreCommand(key, payload, read[2 * i + 1] ?? null);
        if (command) restores.push(command);
      });
      const written = await into.send(restores);
      const refused = written.find((reply) => reply instanceof RespError) as RespError | undefined;
      if (refused) throw new Error(`RESTORE into database ${db} failed: ${refused.message}`);
      copied += restores.length;
    } while (cursor !== '0');
  }
  return copied;
}
