/**
 * Encrypts every backup with a key the operator holds, before it reaches the store: whoever
 * reads the backup folder or the bucket learns the objects' sizes and names, nothing else, and
 * cannot change an object without the restore noticing.
 *
 * The key file holds at least 32 bytes (`openssl rand -hex 32 > key` gives 64); line endings at
 * its end are not part of the key, so an editor adding or removing one changes nothing. From
 * those bytes HKDF-SHA256 derives the AES-256 key and, separately, a key for the key id: the
 * first 8 bytes of HMAC-SHA256 of a fixed label, which identifies the key without revealing it.
 *
 * Format of an object (version 2), made for streaming (the construction of age and Tink's
 * streaming AEAD):
 *
 *   header  "SWBK" | version (1 byte, 2) | key id (8 bytes) | nonce prefix (8 random bytes)
 *           | name tag (16 bytes)
 *   chunks  each AES-256-GCM of at most 64 KiB of the backup, then its 16-byte tag;
 *           every chunk but the last holds exactly 64 KiB, the last one 0 to 64 KiB.
 *
 * The name tag is HMAC-SHA256, under a third key derived from the key file, of the object's key
 * (`redis/<add-on id>/<backup id>.rdb`, `postgresql/wal/<segment>`...), first 16 bytes. It binds
 * the object to the name it was written under, and so to its add-on where the name holds the
 * add-on's id (Redis snapshots; PostgreSQL base backups and WAL are the whole cluster's, named by
 * their time and segment): an object copied or moved to another name, or another add-on's, is
 * refused before anything is decrypted, saying so. The tag is in the header, and the header is
 * part of every chunk's additional data, so it cannot be changed without the chunks failing.
 *
 * Version 1 objects (written before names were bound: the same header without the name tag)
 * are still read, with every check above but the name's; they leave the store as retention
 * removes the backups they belong to, and a restore of one says in its log nothing more than
 * before. New objects are always written in version 2.
 *
 * Chunk i's nonce is the object's nonce prefix followed by i (4 bytes, big-endian); its
 * additional data is the header, i (8 bytes, big-endian) and 1 for the last chunk, else 0. So a
 * chunk moved to another place or another object fails its check, and so does an object cut at
 * a chunk boundary, whose new last chunk was not written as the last one. The key id is read
 * before anything is decrypted: a backup written with another key says so instead of looking
 * damaged.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { BackupObjectDamaged, BackupStoreError, type BackupStore, type StoredObject } from './backup-store.js';

const MAGIC = Buffer.from('SWBK');
const VERSION = 2;
/** Objects written before names were bound: read, never written. */
const UNBOUND_VERSION = 1;
const KEY_ID_BYTES = 8;
const NONCE_PREFIX_BYTES = 8;
const NAME_TAG_BYTES = 16;
/** The header of a version 1 object, and the start of a version 2 one. */
export const V1_HEADER_BYTES = MAGIC.length + 1 + KEY_ID_BYTES + NONCE_PREFIX_BYTES;
export const HEADER_BYTES = V1_HEADER_BYTES + NAME_TAG_BYTES;
const NONCE_PREFIX_AT = V1_HEADER_BYTES - NONCE_PREFIX_BYTES;
/** Bytes of backup in every chunk but the last. */
export const CHUNK_BYTES = 64 * 1024;
const TAG_BYTES = 16;
const MIN_KEY_BYTES = 32;
/** The 4-byte counter in the nonce bounds an object to 2^32 chunks (256 TiB). */
const MAX_CHUNKS = 2 ** 32;

/** A key loaded from the operator's key file. */
export interface BackupKey {
  /** The key file, for messages. */
  file: string;
  /** 16 hex digits naming the key without revealing it. */
  id: string;
  encryptionKey: Buffer;
  /** Keys the HMAC binding each object to its name. */
  nameKey: Buffer;
}

/** Derives the encryption key and key id from a key file's contents (line endings at the end dropped). */
export function backupKeyFromBytes(contents: Buffer, file: string): BackupKey {
  let end = contents.length;
  while (end > 0 && (contents[end - 1] === 0x0a || contents[end - 1] === 0x0d)) end--;
  const material = contents.subarray(0, end);
  if (material.length < MIN_KEY_BYTES) {
    throw new BackupStoreError(
      `The backup key file ${file} holds ${material.length} bytes; a backup key has at least ${MIN_KEY_BYTES}.`,
      `Make a new key with \`openssl rand -hex 32 > ${file}\` (then chmod 600 it); backups written with the old one need the old one to be read.`,
    );
  }
  const salt = Buffer.from('slipway backups');
  const encryptionKey = Buffer.from(hkdfSync('sha256', material, salt, 'slipway backup encryption v1', 32));
  const idKey = Buffer.from(hkdfSync('sha256', material, salt, 'slipway backup key id v1', 32));
  const id = createHmac('sha256', idKey).update('slipway backup key id').digest().subarray(0, KEY_ID_BYTES).toString('hex');
  const nameKey = Buffer.from(hkdfSync('sha256', material, salt, 'slipway backup object name v2', 32));
  return { file, id, encryptionKey, nameKey };
}

/** Reads the key file, refusing one that others than its owner may read or change. */
export async function loadBackupKey(file: string): Promise<BackupKey> {
  const handle = await open(file, 'r').catch((e: NodeJS.ErrnoException) => {
    throw new BackupStoreError(
      `Cannot read the backup key file ${file}: ${e.code === 'ENOENT' ? 'there is no such file' : (e.code ?? e.message)}.`,
      `Give the path of an existing key file, or make one with \`openssl rand -hex 32 > ${file}; chmod 600 ${file}\`.`,
    );
  });
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new BackupStoreError(`The backup key file ${file} is not a file.`, 'Give the path of the key file itself.');
    if ((stats.mode & 0o077) !== 0) {
      throw new BackupStoreError(
        `The backup key file ${file} can be read or changed by others than its owner (mode ${(stats.mode & 0o777).toString(8).padStart(4, '0')}).`,
        `Run \`chmod 600 ${file}\`: whoever reads the key can read every backup.`,
      );
    }
    return backupKeyFromBytes(await handle.readFile(), file);
  } finally {
    await handle.close();
  }
}

/** A BackupStore that encrypts what it puts and checks what it gets, over any other store. */
export class EncryptedBackupStore implements BackupStore {
  constructor(
    private readonly inner: BackupStore,
    private readonly key: BackupKey,
  ) {}

  describe(): string {
    return `${this.inner.describe()}, encrypted with the key in ${this.key.file} (key id ${this.key.id})`;
  }

  /** Stores the encrypted object; sizeBytes is its stored size, as list() gives it. */
  put(key: string, body: Readable): Promise<{ sizeBytes: number }> {
    return this.inner.put(key, Readable.from(encrypt(body, this.key, key), { objectMode: false }));
  }

  /** Rejects at once when the object was written with another key or is not an encrypted backup. */
  async get(key: string): Promise<Readable> {
    const stored = await this.inner.get(key);
    const reader = new ChunkReader(stored);
    try {
      let header = await reader.take(V1_HEADER_BYTES);
      checkHeader(header, key, this.key);
      if (header[MAGIC.length] === VERSION) {
        const tag = await reader.take(NAME_TAG_BYTES);
        if (tag.length < NAME_TAG_BYTES) {
          throw damaged(
            key,
            `it is ${V1_HEADER_BYTES + tag.length} bytes long, shorter than its ${HEADER_BYTES}-byte header: it was cut short`,
          );
        }
        checkNameTag(tag, key, this.key);
        header = Buffer.concat([header, tag]);
      }
      return Readable.from(decrypt(reader, header, key, this.key), { objectMode: false });
    } catch (e) {
      stored.destroy();
      throw e;
    }
  }

  list(prefix: string): Promise<StoredObject[]> {
    return this.inner.list(prefix);
  }

  delete(key: string): Promise<void> {
    return this.inner.delete(key);
  }

  close(): void {
    this.inner.close?.();
  }
}

async function* encrypt(body: Readable, key: BackupKey, objectKey: string): AsyncGenerator<Buffer> {
  const header = Buffer.concat([
    MAGIC,
    Buffer.of(VERSION),
    Buffer.from(key.id, 'hex'),
    randomBytes(NONCE_PREFIX_BYTES),
    nameTag(key, objectKey),
  ]);
  yield header;
  const pending = new Pending();
  let index = 0;
  for await (const chunk of body) {
    pending.add(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
    // A full chunk is sealed only once more data follows it: the last chunk is marked as such.
    while (pending.length > CHUNK_BYTES) yield seal(key, header, index++, pending.take(CHUNK_BYTES), false);
  }
  yield seal(key, header, index, pending.take(pending.length), true);
}

function seal(key: BackupKey, header: Buffer, index: number, plain: Buffer, last: boolean): Buffer {
  if (index >= MAX_CHUNKS) throw new BackupStoreError('A backup larger than 256 TiB cannot be encrypted in one object.');
  const cipher = createCipheriv('aes-256-gcm', key.encryptionKey, nonce(header, index), { authTagLength: TAG_BYTES });
  cipher.setAAD(additionalData(header, index, last));
  return Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
}

async function* decrypt(reader: ChunkReader, header: Buffer, objectKey: string, key: BackupKey): AsyncGenerator<Buffer> {
  const sealedBytes = CHUNK_BYTES + TAG_BYTES;
  let index = 0;
  try {
    for (;;) {
      // Read one byte past a full chunk to know whether it is the last.
      const available = await reader.fill(sealedBytes + 1);
      if (available > sealedBytes) {
        yield openChunk(reader.takePending(sealedBytes), index++, false);
        continue;
      }
      if (available < TAG_BYTES) {
        throw damaged(objectKey, `it ends inside chunk ${index}: it was cut short`);
      }
      yield openChunk(reader.takePending(available), index, true);
      return;
    }
  } finally {
    reader.close();
  }

  function openChunk(sealed: Buffer, i: number, last: boolean): Buffer {
    const plain = unseal(key, header, i, sealed, last);
    if (plain) return plain;
    // The chunk at the end was written as a middle one: the object was cut at a chunk boundary.
    if (last && unseal(key, header, i, sealed, false)) {
      throw damaged(objectKey, `it ends after chunk ${i}, which was not written as its last one: it was cut short`);
    }
    throw damaged(objectKey, `chunk ${i} fails its authentication check: it was altered, cut short or reordered`);
  }
}

function unseal(key: BackupKey, header: Buffer, index: number, sealed: Buffer, last: boolean): Buffer | undefined {
  const decipher = createDecipheriv('aes-256-gcm', key.encryptionKey, nonce(header, index), { authTagLength: TAG_BYTES });
  decipher.setAAD(additionalData(header, index, last));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  const plain = decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES));
  try {
    decipher.final();
  } catch {
    return undefined;
  }
  return plain;
}

/** What binds an object to its name: HMAC-SHA256 of the name under the key's name key, 16 bytes. */
function nameTag(key: BackupKey, objectKey: string): Buffer {
  return createHmac('sha256', key.nameKey).update(`slipway backup object\0${objectKey}`).digest().subarray(0, NAME_TAG_BYTES);
}

function checkNameTag(tag: Buffer, objectKey: string, key: BackupKey): void {
  if (timingSafeEqual(tag, nameTag(key, objectKey))) return;
  throw new BackupObjectDamaged(
    objectKey,
    `backup object ${objectKey} was not written under this name: refusing to restore it. ` +
      'It is another backup object (of another add-on or another time) copied or moved there.',
    'Restore another backup, and look for who could write to the backup store: objects there were swapped.',
  );
}

function nonce(header: Buffer, index: number): Buffer {
  const value = Buffer.alloc(NONCE_PREFIX_BYTES + 4);
  header.copy(value, 0, NONCE_PREFIX_AT, V1_HEADER_BYTES);
  value.writeUInt32BE(index, NONCE_PREFIX_BYTES);
  return value;
}

function additionalData(header: Buffer, index: number, last: boolean): Buffer {
  const tail = Buffer.alloc(9);
  tail.writeBigUInt64BE(BigInt(index), 0);
  tail[8] = last ? 1 : 0;
  return Buffer.concat([header, tail]);
}

/** The first V1_HEADER_BYTES of an object: magic, a version this slipway reads, this key's id. */
function checkHeader(header: Buffer, objectKey: string, key: BackupKey): void {
  if (header.length < V1_HEADER_BYTES) {
    const n = Math.min(header.length, MAGIC.length);
    if (!header.subarray(0, n).equals(MAGIC.subarray(0, n))) throw notEncrypted(objectKey, key);
    throw damaged(objectKey, `it is ${header.length} bytes long, shorter than its header: it was cut short`);
  }
  if (!header.subarray(0, MAGIC.length).equals(MAGIC)) throw notEncrypted(objectKey, key);
  const version = header[MAGIC.length]!;
  if (version !== VERSION && version !== UNBOUND_VERSION) {
    throw new BackupObjectDamaged(
      objectKey,
      `The backup "${objectKey}" is in encryption format version ${version}; this slipway reads versions ${UNBOUND_VERSION} and ${VERSION}.`,
      'Restore it with the slipway version that wrote it, or a newer one.',
    );
  }
  const id = header.subarray(MAGIC.length + 1, MAGIC.length + 1 + KEY_ID_BYTES);
  if (!timingSafeEqual(id, Buffer.from(key.id, 'hex'))) {
    throw new BackupObjectDamaged(
      objectKey,
      `The backup "${objectKey}" was written with another key (key id ${id.toString('hex')}), ` +
        `not the one in ${key.file} (key id ${key.id}).`,
      'Restore it with the key file it was written with: a backup cannot be read with any other key.',
    );
  }
}

function notEncrypted(objectKey: string, key: BackupKey): BackupObjectDamaged {
  return new BackupObjectDamaged(
    objectKey,
    `The backup "${objectKey}" is not an encrypted slipway backup, though the store is set to decrypt with ${key.file}.`,
    'It may have been written before encryption was turned on: read it without the key file.',
  );
}

function damaged(objectKey: string, what: string): BackupObjectDamaged {
  return new BackupObjectDamaged(
    objectKey,
    `The backup "${objectKey}" is damaged: ${what}. Nothing read from it can be trusted.`,
    'Restore another backup, and look for what changed this one: a full disk, a copy that stopped early, someone with access to the store.',
  );
}

/** Bytes received but not yet used, kept as the list of buffers they came in. */
class Pending {
  private buffers: Buffer[] = [];
  length = 0;

  add(buffer: Buffer): void {
    if (buffer.length === 0) return;
    this.buffers.push(buffer);
    this.length += buffer.length;
  }

  /** The first `n` bytes (n ≤ length), removed. */
  take(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      const first = this.buffers[0]!;
      const used = Math.min(first.length, n - filled);
      first.copy(out, filled, 0, used);
      filled += used;
      if (used === first.length) this.buffers.shift();
      else this.buffers[0] = first.subarray(used);
    }
    this.length -= n;
    return out;
  }
}

/** Reads a stream in pieces of the sizes asked for. */
class ChunkReader {
  private readonly pending = new Pending();
  private readonly iterator: AsyncIterator<Buffer | string>;
  private ended = false;

  constructor(private readonly stream: Readable) {
    this.iterator = stream[Symbol.asyncIterator]();
  }

  /** Reads until `n` bytes are pending or the stream ended; the bytes pending. */
  async fill(n: number): Promise<number> {
    while (this.pending.length < n && !this.ended) {
      const next = await this.iterator.next();
      if (next.done) this.ended = true;
      else this.pending.add(typeof next.value === 'string' ? Buffer.from(next.value) : next.value);
    }
    return this.pending.length;
  }

  /** Up to `n` bytes: fewer only when the stream ended first. */
  async take(n: number): Promise<Buffer> {
    return this.pending.take(Math.min(n, await this.fill(n)));
  }

  /** `n` bytes already pending. */
  takePending(n: number): Buffer {
    return this.pending.take(n);
  }

  close(): void {
    if (!this.ended) this.stream.destroy();
  }
}
