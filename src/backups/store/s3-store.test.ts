import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { BackupStoreError } from './backup-store.js';
import { parseS3Credentials, parseS3Url, readS3CredentialsFile, S3BackupStore, s3CredentialsFromEnv } from './s3-store.js';

test('an S3 URL gives the endpoint, the bucket and the key prefix', () => {
  assert.deepEqual(parseS3Url('http://127.0.0.1:8333/backups'), { endpoint: 'http://127.0.0.1:8333', bucket: 'backups', prefix: '' });
  assert.deepEqual(parseS3Url('http://127.0.0.1:8333/backups/'), { endpoint: 'http://127.0.0.1:8333', bucket: 'backups', prefix: '' });
  assert.deepEqual(parseS3Url('https://s3.example.com/my.bucket-1/slipway/prod/'), {
    endpoint: 'https://s3.example.com',
    bucket: 'my.bucket-1',
    prefix: 'slipway/prod/',
  });
});

test('S3 URLs that cannot be used are refused, saying the expected form, never echoing a secret', () => {
  const cases: [string, RegExp][] = [
    ['not a url', /is not a URL.*http\(s\):\/\/host:port\/bucket/],
    ['ftp://host/bucket', /is not http or https/],
    ['http://127.0.0.1:8333', /names no bucket/],
    ['http://127.0.0.1:8333/', /names no bucket/],
    ['http://127.0.0.1:8333/Upper', /"Upper" .* is not a bucket name/],
    ['http://127.0.0.1:8333/ab', /"ab" .* is not a bucket name/],
    ['http://127.0.0.1:8333/bucket/a b', /"a b" .* is not a prefix part/],
    ['http://127.0.0.1:8333/bucket?x=1', /has a query/],
  ];
  for (const [url, message] of cases)
    assert.throws(
      () => parseS3Url(url),
      (e: unknown) => e instanceof BackupStoreError && message.test(e.message),
      url,
    );
  assert.throws(
    () => parseS3Url('http://AKIDEXAMPLE:wJalrXUtnFEMI@127.0.0.1:8333/bucket'),
    (e: unknown) => e instanceof BackupStoreError && /carries credentials/.test(e.message) && !e.message.includes('wJalrXUtnFEMI'),
  );
});

test('a credentials file: two name=value lines, comments and blank lines allowed, the region optional', () => {
  const text = '# slipway backups\naccess_key_id = AKIDEXAMPLE\n\nsecret_access_key=wJalr/XUtn=FEMI\n';
  assert.deepEqual(parseS3Credentials(text, '/etc/slipway/s3', {}), {
    accessKeyId: 'AKIDEXAMPLE',
    secretAccessKey: 'wJalr/XUtn=FEMI',
    sessionToken: undefined,
    region: 'us-east-1',
    source: '/etc/slipway/s3',
  });
  assert.equal(parseS3Credentials(`${text}region=eu-west-3\n`, 'f', { AWS_REGION: 'us-west-2' }).region, 'eu-west-3');
  assert.equal(parseS3Credentials(text, 'f', { AWS_REGION: 'us-west-2' }).region, 'us-west-2');
  assert.throws(
    () => parseS3Credentials('access_key_id=AKIDEXAMPLE\nsecret: wJalrXUtnFEMI\n', 'f', {}),
    (e: unknown) =>
      e instanceof BackupStoreError && /Line 2 of the S3 credentials file f/.test(e.message) && !e.message.includes('wJalrXUtnFEMI'),
  );
  assert.throws(() => parseS3Credentials('access_key_id=AKIDEXAMPLE\n', 'f', {}), /lacks secret_access_key/);
});

test('a credentials file others may read is refused', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-s3-credentials-'));
  const file = join(dir, 'credentials');
  writeFileSync(file, 'access_key_id=a\nsecret_access_key=b\n', { mode: 0o644 });
  chmodSync(file, 0o644);
  await assert.rejects(readS3CredentialsFile(file, {}), /can be read or changed by others than its owner \(mode 0644\)/);
  chmodSync(file, 0o600);
  assert.equal((await readS3CredentialsFile(file, {})).accessKeyId, 'a');
  await assert.rejects(readS3CredentialsFile(join(dir, 'missing'), {}), /Cannot read the S3 credentials file .*no such file/);
});

test('credentials from the environment, and what is missing when they are not there', () => {
  assert.deepEqual(s3CredentialsFromEnv({ AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b', AWS_REGION: 'eu-west-3' }), {
    accessKeyId: 'a',
    secretAccessKey: 'b',
    sessionToken: undefined,
    region: 'eu-west-3',
    source: 'the environment',
  });
  assert.throws(() => s3CredentialsFromEnv({}), /AWS_ACCESS_KEY_ID is not set and no credentials file was given/);
  assert.throws(() => s3CredentialsFromEnv({ AWS_ACCESS_KEY_ID: 'a' }), /AWS_SECRET_ACCESS_KEY is not set/);
});

test('describe names the bucket, endpoint, prefix and where the credentials came from, never the keys', () => {
  const store = new S3BackupStore({
    location: parseS3Url('http://127.0.0.1:8333/backups/slipway'),
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI', region: 'us-east-1', source: '/etc/slipway/s3' },
  });
  const text = store.describe();
  store.close();
  assert.equal(text, 'the S3 bucket "backups" at http://127.0.0.1:8333, under slipway/ (credentials from /etc/slipway/s3)');
});

test('an endpoint nothing listens on is reported as unreachable, in words', async () => {
  // A port just freed: nothing listens there.
  const port = await new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
  const store = new S3BackupStore({
    location: parseS3Url(`http://127.0.0.1:${port}/backups`),
    credentials: { accessKeyId: 'a', secretAccessKey: 'b', region: 'us-east-1', source: 'the environment' },
  });
  const unreachable = (e: unknown) =>
    e instanceof BackupStoreError &&
    new RegExp(`the S3 store at http://127.0.0.1:${port} cannot be reached \\(the connection was refused\\)`).test(e.message);
  try {
    await assert.rejects(store.list(''), unreachable);
    await assert.rejects(store.get('a/b'), unreachable);
    await assert.rejects(store.put('a/b', Readable.from([Buffer.from('x')])), unreachable);
    await assert.rejects(store.delete('a/b'), unreachable);
  } finally {
    store.close();
  }
});
