/**
 * Backups in a bucket of an S3-compatible object store (AWS S3, SeaweedFS, Ceph RGW, Garage,
 * MinIO…), reached by path-style URLs so any endpoint works without DNS for bucket names.
 *
 * Configured by one URL, `http(s)://host:port/bucket/optional/prefix`: the endpoint is the URL's
 * origin, the bucket its first path part, the rest a prefix put before every key. Credentials
 * come from a credentials file (see parseS3Credentials) or from the environment
 * (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN; AWS_REGION, default us-east-1);
 * nothing else of the SDK's credential chain (~/.aws, instance metadata) is consulted, so what
 * the daemon uses is what its configuration says.
 *
 * A put is a single PutObject or, past one part, a multipart upload that is aborted when the
 * stream fails: the object appears whole when the upload completes, or not at all.
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
  type ListObjectsV2CommandOutput,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { EgressGuard } from '../../network/egress-guard.js';
import { open } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import {
  assertBackupKey,
  assertBackupPrefix,
  BackupObjectMissing,
  BackupStoreError,
  type BackupStore,
  type StoredObject,
} from './backup-store.js';

export interface S3Location {
  /** The URL's origin: `http://127.0.0.1:8333`. */
  endpoint: string;
  bucket: string;
  /** Put before every key; empty, or ending with '/'. */
  prefix: string;
}

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  region: string;
  /** Where they were read, for describe() and messages: a file, or "the environment". */
  source: string;
}

export interface S3StoreOptions {
  location: S3Location;
  credentials: S3Credentials;
  /** Bytes per part of a multipart upload, and the size past which one is used (at least 5 MiB). */
  partSizeBytes?: number;
  /** The daemon's egress guard: every connection to the endpoint goes to an address it let through. */
  egress?: EgressGuard;
}

const DEFAULT_REGION = 'us-east-1';
/** S3's smallest part but the last. Parts are held in memory, two at a time. */
const MIN_PART_BYTES = 5 * 1024 * 1024;
const DEFAULT_PART_BYTES = 16 * 1024 * 1024;
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const URL_FORMAT = 'http(s)://host:port/bucket/optional/prefix';

/** The endpoint, bucket and key prefix of an S3 URL such as http://127.0.0.1:8333/backups/slipway. */
export function parseS3Url(text: string): S3Location {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new BackupStoreError(`"${text}" is not a URL; an S3 backup store is given as ${URL_FORMAT}.`);
  }
  const shown = `${url.protocol}//${url.host}${url.pathname}`;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new BackupStoreError(`The S3 URL ${shown} is not http or https; an S3 backup store is given as ${URL_FORMAT}.`);
  }
  if (url.username || url.password) {
    throw new BackupStoreError(
      `The S3 URL ${shown} carries credentials; they do not belong in a URL, which ends up in logs and process listings.`,
      'Put them in a credentials file (access_key_id=… and secret_access_key=… lines, mode 0600) or in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.',
    );
  }
  if (url.search || url.hash)
    throw new BackupStoreError(`The S3 URL ${shown}${url.search}${url.hash} has a query or fragment; give it as ${URL_FORMAT}.`);
  const parts = decodeURIComponent(url.pathname)
    .split('/')
    .filter((part) => part !== '');
  const bucket = parts.shift();
  if (!bucket) throw new BackupStoreError(`The S3 URL ${shown} names no bucket; give it as ${URL_FORMAT}.`);
  if (!BUCKET.test(bucket) || bucket.includes('..')) {
    throw new BackupStoreError(
      `"${bucket}" in the S3 URL ${shown} is not a bucket name: 3 to 63 lowercase letters, digits, '.' and '-'.`,
      `Give the URL as ${URL_FORMAT}.`,
    );
  }
  for (const part of parts) {
    if (part === '.' || part === '..' || !/^[A-Za-z0-9._-]+$/.test(part)) {
      throw new BackupStoreError(`"${part}" in the S3 URL ${shown} is not a prefix part: letters, digits, '.', '_' and '-'.`);
    }
  }
  return { endpoint: url.origin, bucket, prefix: parts.length > 0 ? `${parts.join('/')}/` : '' };
}

/**
 * Reads a credentials file: one `name=value` per line, blank lines and lines starting with '#'
 * ignored, names `access_key_id` and `secret_access_key` (required), `session_token` and
 * `region` (optional). Like a key file, it must be readable by its owner only.
 */
export async function readS3CredentialsFile(file: string, env: NodeJS.ProcessEnv): Promise<S3Credentials> {
  const handle = await open(file, 'r').catch((e: NodeJS.ErrnoException) => {
    throw new BackupStoreError(
      `Cannot read the S3 credentials file ${file}: ${e.code === 'ENOENT' ? 'there is no such file' : (e.code ?? e.message)}.`,
      'Give the path of a file with the lines access_key_id=… and secret_access_key=… (mode 0600).',
    );
  });
  try {
    const stats = await handle.stat();
    if ((stats.mode & 0o077) !== 0) {
      throw new BackupStoreError(
        `The S3 credentials file ${file} can be read or changed by others than its owner (mode ${(stats.mode & 0o777).toString(8).padStart(4, '0')}).`,
        `Run \`chmod 600 ${file}\`: whoever reads it can read and delete every backup.`,
      );
    }
    return parseS3Credentials(await handle.readFile('utf8'), file, env);
  } finally {
    await handle.close();
  }
}

/** The contents of a credentials file (format at readS3CredentialsFile); the region defaults to AWS_REGION, then us-east-1. */
export function parseS3Credentials(text: string, file: string, env: NodeJS.ProcessEnv): S3Credentials {
  const values = new Map<string, string>();
  const known = ['access_key_id', 'secret_access_key', 'session_token', 'region'];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const equals = line.indexOf('=');
    const name = equals > 0 ? line.slice(0, equals).trim() : '';
    // The line is never quoted: it may hold a secret.
    if (!known.includes(name)) {
      throw new BackupStoreError(
        `Line ${i + 1} of the S3 credentials file ${file} is not one of ${known.map((k) => `${k}=…`).join(', ')}.`,
        'Write one name=value per line, for example access_key_id=AKIA… and secret_access_key=….',
      );
    }
    values.set(name, line.slice(equals + 1).trim());
  });
  const accessKeyId = values.get('access_key_id');
  const secretAccessKey = values.get('secret_access_key');
  if (!accessKeyId || !secretAccessKey) {
    throw new BackupStoreError(
      `The S3 credentials file ${file} lacks ${!accessKeyId ? 'access_key_id' : 'secret_access_key'}.`,
      'It needs two lines: access_key_id=… and secret_access_key=….',
    );
  }
  return {
    accessKeyId,
    secretAccessKey,
    sessionToken: values.get('session_token') || undefined,
    region: values.get('region') || env.AWS_REGION || DEFAULT_REGION,
    source: file,
  };
}

/** Credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (AWS_SESSION_TOKEN, AWS_REGION optional). */
export function s3CredentialsFromEnv(env: NodeJS.ProcessEnv): S3Credentials {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    throw new BackupStoreError(
      `No credentials for the S3 backup store: ${!accessKeyId ? 'AWS_ACCESS_KEY_ID' : 'AWS_SECRET_ACCESS_KEY'} is not set and no credentials file was given.`,
      'Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the daemon’s environment, or give a credentials file (access_key_id=… and secret_access_key=… lines, mode 0600).',
    );
  }
  return {
    accessKeyId,
    secretAccessKey,
    sessionToken: env.AWS_SESSION_TOKEN || undefined,
    region: env.AWS_REGION || DEFAULT_REGION,
    source: 'the environment',
  };
}

/**
 * The SDK warns, once per process, about Node.js versions its releases of 2027 will drop. It
 * tells the operator of this daemon nothing they can act on (package.json's engines say which
 * Node.js slipway needs), and it landed in the daemon's output at the first backup.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export class S3BackupStore implements BackupStore {
  private readonly client: S3Client;
  private readonly location: S3Location;
  private readonly source: string;
  private readonly partSizeBytes: number;

  constructor(options: S3StoreOptions) {
    const { location, credentials } = options;
    this.location = location;
    this.source = credentials.source;
    this.partSizeBytes = Math.max(MIN_PART_BYTES, options.partSizeBytes ?? DEFAULT_PART_BYTES);
    this.client = new S3Client({
      endpoint: location.endpoint,
      region: credentials.region,
      forcePathStyle: true,
      credentials: {
        accessKeyId: credentials.accessKeyId,
        secretAccessKey: credentials.secretAccessKey,
        sessionToken: credentials.sessionToken,
      },
      // Checksums only where S3 requires them: many S3-compatible servers refuse the newer ones.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 3,
      requestHandler: {
        connectionTimeout: 10_000,
        socketTimeout: 120_000,
        ...(options.egress
          ? { httpAgent: options.egress.httpAgent({ keepAlive: true }), httpsAgent: options.egress.httpsAgent({ keepAlive: true }) }
          : {}),
      },
    });
  }

  describe(): string {
    const { endpoint, bucket, prefix } = this.location;
    return `the S3 bucket "${bucket}" at ${endpoint}${prefix ? `, under ${prefix}` : ''} (credentials from ${this.source})`;
  }

  async put(key: string, body: Readable): Promise<{ sizeBytes: number }> {
    assertBackupKey(key);
    let sizeBytes = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        sizeBytes += chunk.length;
        done(null, chunk);
      },
    });
    body.on('error', (e) => counted.destroy(e));
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.location.bucket, Key: this.location.prefix + key, Body: body.pipe(counted) },
      partSize: this.partSizeBytes,
      queueSize: 2,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (e) {
      // The stream's own failure (a dump that died) is not the store's.
      if (body.errored) throw body.errored;
      throw this.explain(e, `store the backup object "${key}"`);
    }
    return { sizeBytes };
  }

  async get(key: string): Promise<Readable> {
    assertBackupKey(key);
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.location.bucket, Key: this.location.prefix + key }));
      if (!(answer.Body instanceof Readable)) throw new Error('the S3 client gave no readable body');
      return answer.Body;
    } catch (e) {
      if (e instanceof S3ServiceException && (e.name === 'NoSuchKey' || (e.name === 'NotFound' && e.$metadata.httpStatusCode === 404))) {
        throw new BackupObjectMissing(key);
      }
      throw this.explain(e, `read the backup object "${key}"`);
    }
  }

  async list(prefix: string): Promise<StoredObject[]> {
    assertBackupPrefix(prefix);
    const found: StoredObject[] = [];
    let token: string | undefined;
    do {
      let page: ListObjectsV2CommandOutput;
      try {
        page = await this.client.send(
          new ListObjectsV2Command({ Bucket: this.location.bucket, Prefix: this.location.prefix + prefix, ContinuationToken: token }),
        );
      } catch (e) {
        throw this.explain(e, `list the backup objects under "${prefix}"`);
      }
      for (const object of page.Contents ?? []) {
        if (!object.Key?.startsWith(this.location.prefix)) continue;
        found.push({
          key: object.Key.slice(this.location.prefix.length),
          sizeBytes: object.Size ?? 0,
          modifiedAt: object.LastModified ?? new Date(0),
        });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async delete(key: string): Promise<void> {
    assertBackupKey(key);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: this.location.prefix + key }));
    } catch (e) {
      if (e instanceof S3ServiceException && e.name === 'NoSuchKey') return;
      throw this.explain(e, `delete the backup object "${key}"`);
    }
  }

  /** Closes the client's connections. */
  close(): void {
    this.client.destroy();
  }

  /** What went wrong, in the operator's words: never the SDK's stack, never a secret. */
  private explain(e: unknown, action: string): BackupStoreError {
    const { endpoint, bucket } = this.location;
    const where = `the S3 store at ${endpoint}`;
    if (e instanceof S3ServiceException) {
      const status = e.$metadata.httpStatusCode;
      if (e.name === 'NoSuchBucket') {
        return new BackupStoreError(
          `Cannot ${action}: there is no bucket "${bucket}" at ${endpoint}.`,
          'Create the bucket, or fix its name in the S3 URL (the first part of its path).',
        );
      }
      if (
        ['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'InvalidToken', 'ExpiredToken', 'AccessDenied', 'Forbidden'].includes(e.name) ||
        status === 403
      ) {
        const what =
          e.name === 'InvalidAccessKeyId'
            ? 'it does not know the access key'
            : e.name === 'SignatureDoesNotMatch'
              ? 'the secret key does not match the access key'
              : e.name === 'ExpiredToken'
                ? 'the session token has expired'
                : 'the credentials may not do this';
        return new BackupStoreError(
          `Cannot ${action}: ${where} refused the credentials from ${this.source} (${e.name}: ${what}).`,
          `Check the access key and secret key in ${this.source}, and that they may read and write the bucket "${bucket}".`,
        );
      }
      return new BackupStoreError(
        `Cannot ${action}: ${where} answered ${status ?? 'without a status'} ${e.name}${e.message && e.message !== e.name && e.message !== 'UnknownError' ? ` (${oneLine(e.message)})` : ''}.`,
        'Check that the URL points to an S3-compatible API and that the store is healthy.',
      );
    }
    const code = networkCode(e);
    const refused = refusalOf(e);
    if (refused) {
      return new BackupStoreError(
        `Cannot ${action}: ${where} may not be reached: ${refused}.`,
        'Give an S3 endpoint on the internet, or allow its range with --egress-allow.',
      );
    }
    if (code) {
      const what: Record<string, string> = {
        ECONNREFUSED: 'the connection was refused',
        ENOTFOUND: 'the host name does not resolve',
        EAI_AGAIN: 'the host name does not resolve',
        ETIMEDOUT: 'the connection timed out',
        TimeoutError: 'the connection timed out',
        EHOSTUNREACH: 'the host is unreachable',
        ENETUNREACH: 'the network is unreachable',
        ECONNRESET: 'the connection was reset',
        EPIPE: 'the connection was closed',
        CERT: 'its TLS certificate is not trusted',
      };
      return new BackupStoreError(
        `Cannot ${action}: ${where} cannot be reached (${what[code] ?? code}).`,
        'Check the S3 URL, that the object store is running, and that this machine can reach it.',
      );
    }
    return new BackupStoreError(`Cannot ${action} in ${where}: ${oneLine(e instanceof Error ? e.message : String(e))}.`);
  }
}

function oneLine(text: string): string {
  const line = text.split('\n')[0]!.trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/** The network failure behind an error of the HTTP client, possibly wrapped (AggregateError). */
/** The egress guard's refusal inside an SDK error, if that is what it is. */
function refusalOf(e: unknown): string | undefined {
  if (!(e instanceof Error)) return undefined;
  if ((e as NodeJS.ErrnoException).code === 'EGRESS_REFUSED') return e.message;
  return e.cause ? refusalOf(e.cause) : undefined;
}

function networkCode(e: unknown): string | undefined {
  if (!(e instanceof Error)) return undefined;
  const error = e as NodeJS.ErrnoException & { errors?: unknown[] };
  if (error.name === 'TimeoutError') return 'TimeoutError';
  if (error.code?.startsWith('ERR_TLS') || error.code?.includes('CERT') || error.code === 'DEPTH_ZERO_SELF_SIGNED_CERT') return 'CERT';
  if (error.code && /^E[A-Z_]+$/.test(error.code) && error.code !== 'ERR_STREAM_PREMATURE_CLOSE') return error.code;
  for (const inner of error.errors ?? []) {
    const code = networkCode(inner);
    if (code) return code;
  }
  return error.cause ? networkCode(error.cause) : undefined;
}
