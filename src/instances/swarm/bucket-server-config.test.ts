import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serviceSpec } from './service-spec.js';
import {
  addressOfSftpListen,
  bucketVolumeName,
  glusterCli,
  glusterdScript,
  glusterdVolfile,
  glusterfsOptions,
  inGlusterdNamespace,
  namespaceMountArgv,
  holderScript,
  HOLDER_TMPFS,
  nodeBucketVolume,
  parseBucketServerAddress,
  SERVER_CERT_NAME,
  taskBucketMount,
  volumeOptions,
} from './bucket-server-config.js';
import { caArgv, requestArgv, signArgv } from './bucket-tls.js';

test("a bucket's volume: a prefix, a digest of its folder's name; one node volume per app", () => {
  const volume = bucketVolumeName('/var/lib/slipway/fs-buckets/3f1c-addon');
  assert.match(volume, /^slbgl-[0-9a-f]{12}$/);
  assert.equal(volume, bucketVolumeName('/elsewhere/3f1c-addon'));
  assert.notEqual(volume, bucketVolumeName('/var/lib/slipway/fs-buckets/other'));
  assert.notEqual(volume, SERVER_CERT_NAME);
  assert.equal(nodeBucketVolume('slipway77', volume, 2001), `slipway77-${volume}-u2001`);
  assert.notEqual(nodeBucketVolume('slipway77', volume, 2001), nodeBucketVolume('slipway77', volume, 2002));
});

test('--swarm-bucket-server is an IPv4 address of this machine; the older --swarm-bucket-sftp gives its address', () => {
  assert.equal(parseBucketServerAddress('10.0.0.1'), '10.0.0.1');
  for (const bad of ['10.0.0.1:2222', 'host', '10.0.0.300', '127.0.0.1', '0.0.0.0', ''])
    assert.throws(() => parseBucketServerAddress(bad), /--swarm-bucket-server must be an IPv4 address of this machine/, bad);
  assert.equal(addressOfSftpListen('10.0.0.1:2222'), '10.0.0.1');
  assert.throws(() => addressOfSftpListen('127.0.0.1:2222'), /--swarm-bucket-sftp must be/);
});

test("glusterd's config: the given address only, its socket in its own run folder, the bricks' port range", () => {
  const lines = glusterdVolfile('10.0.0.1')
    .split('\n')
    .map((l) => l.trim());
  for (const line of [
    'option transport.socket.bind-address 10.0.0.1',
    'option transport.socket.listen-port 24007',
    'option glusterd-sockfile /run/gluster/glusterd.socket',
    'option working-directory /var/lib/glusterd',
    'option base-port 49152',
    'option max-port 49651',
  ])
    assert.ok(lines.includes(line), line);
  const script = glusterdScript({ state: '/d/g/state', logs: '/d/g/logs', run: '/d/g/run', tls: "/d/it's/tls" }, '/d/g/glusterd.vol');
  assert.match(script, /^set -eu$/m);
  assert.match(script, /^mount --bind '\/d\/g\/state' \/var\/lib\/glusterd$/m);
  assert.match(script, /^mount --bind '\/d\/it'\\''s\/tls' \/usr\/lib\/ssl$/m);
  assert.match(script, /^exec glusterd -N -f '\/d\/g\/glusterd.vol'$/m);
  assert.deepEqual(inGlusterdNamespace(42, ['mountpoint', '-q', '/d/b']), ['nsenter', '-t', '42', '-m', 'mountpoint', '-q', '/d/b']);
  assert.deepEqual(namespaceMountArgv('/dev/loop7', '/d/b'), [
    'mount',
    '-t',
    'ext4',
    '-o',
    'nodev,nosuid,noatime,acl',
    '/dev/loop7',
    '/d/b',
  ]);
  assert.deepEqual(glusterCli(42, ['volume', 'list']), [
    'nsenter',
    '-t',
    '42',
    '-m',
    'gluster',
    '--mode=script',
    '--glusterd-sock=/run/gluster/glusterd.socket',
    'volume',
    'list',
  ]);
});

test("a bucket's volume admits its own certificate only, over TLS both ways, root squashed", () => {
  const options = new Map(volumeOptions('slbgl-0123456789ab'));
  assert.equal(options.get('auth.ssl-allow'), 'slbgl-0123456789ab');
  assert.equal(options.get('client.ssl'), 'on');
  assert.equal(options.get('server.ssl'), 'on');
  assert.equal(options.get('server.root-squash'), 'on');
  assert.equal(options.get('ssl.ca-list'), '/usr/lib/ssl/glusterfs.ca');
});

test('the certificates: ed25519, signed by the buckets’ own CA, named after the volume', () => {
  assert.deepEqual(caArgv('/d/ca').slice(0, 5), ['openssl', 'req', '-x509', '-newkey', 'ed25519']);
  assert.ok(caArgv('/d/ca').includes('/CN=slipway-buckets-ca'));
  assert.ok(requestArgv('/d/ca', 'slbgl-0123456789ab').includes('/CN=slbgl-0123456789ab'));
  const sign = signArgv('/d/ca', 'slbgl-0123456789ab');
  assert.equal(sign[sign.indexOf('-CA') + 1], '/d/ca/ca.pem');
  assert.equal(sign[sign.indexOf('-out') + 1], '/d/ca/slbgl-0123456789ab.pem');
});

test("the holder's client: nodev, nosuid, ACLs, no caches; secrets from its environment; the mount checked, not the exit", () => {
  const options = glusterfsOptions();
  for (const o of ['-N', '--acl', '--fuse-mountopts=nodev,nosuid', '--attribute-timeout=0', '--entry-timeout=0', '--negative-timeout=0'])
    assert.ok(options.includes(o), o);
  const script = holderScript('slipway-abc');
  assert.match(script, /echo "slipway-abc mounted"/);
  assert.match(script, /grep -q " \/mnt\/bucket fuse\.glusterfs "/);
  // The secrets come from the environment, never from the command line.
  assert.match(script, /"\$SLIPWAY_BUCKET_KEY" > \/usr\/lib\/ssl\/glusterfs\.key/);
  assert.match(script, /: > \/var\/lib\/glusterd\/secure-access/);
  assert.match(script, /trap 'umount -l \/mnt\/bucket/);
  assert.ok(HOLDER_TMPFS.includes('/usr/lib/ssl') && HOLDER_TMPFS.includes('/tmp'));
});

test("a task mounts its app's node volume of each bucket, in the app's folder, with the bucket's group", () => {
  const spec = serviceSpec({
    name: 's',
    owner: 'slipway77',
    role: 'instance',
    appId: 'app',
    deploymentId: 'd',
    image: 'i',
    command: ['node', 'server.js'],
    env: {},
    workingDir: '/data/apps/app/releases/d',
    sandbox: {
      user: { uid: 2001, gid: 2001, name: 'app' },
      limits: { memoryBytes: 256 * 1024 * 1024, pids: 100, cpuShares: 1024 },
      readOnlyPaths: [],
      buckets: [{ path: 'uploads', source: '/data/fs-buckets/b1', gid: 2400001 }],
    } as never,
    network: 'n',
    restartDelayMs: 1000,
    stopGraceMs: 1000,
  }) as { TaskTemplate: { ContainerSpec: { Mounts: unknown[]; Groups?: string[] } } };
  const { Mounts, Groups } = spec.TaskTemplate.ContainerSpec;
  assert.deepEqual(Mounts.at(-1), taskBucketMount('slipway77', '/data/fs-buckets/b1', 2001, '/data/apps/app/releases/d/uploads'));
  assert.match(JSON.stringify(Mounts.at(-1)), new RegExp(`"Source":"slipway77-${bucketVolumeName('/data/fs-buckets/b1')}-u2001"`));
  assert.deepEqual(Groups, ['2400001']);
  // A node without the bucket's volume fails the task rather than giving it an empty folder.
  assert.match(JSON.stringify(Mounts.at(-1)), /nonexistent/);
});
