import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serviceSpec } from './service-spec.js';
import {
  authorizedKey,
  bucketVolume,
  holderScript,
  parseSftpListen,
  sftpAccount,
  sshdConfig,
  sshfsOptions,
  taskBucketMount,
} from './bucket-sftp-config.js';

test("a bucket's account: the prefix sshd admits, a digest of its folder's name, short enough for useradd", () => {
  const account = sftpAccount('/var/lib/slipway/fs-buckets/3f1c-addon');
  assert.match(account, /^slbsftp-[0-9a-f]{12}$/);
  assert.equal(account, sftpAccount('/elsewhere/3f1c-addon'));
  assert.notEqual(account, sftpAccount('/var/lib/slipway/fs-buckets/other'));
  assert.equal(bucketVolume('slipway77', account), `slipway77-${account}`);
});

test('--swarm-bucket-sftp is an IPv4 address and a port, refused otherwise with what to give', () => {
  assert.deepEqual(parseSftpListen('10.0.0.1:2222'), { host: '10.0.0.1', port: 2222 });
  for (const bad of ['10.0.0.1', 'host:22', '10.0.0.300:22', '10.0.0.1:0', '10.0.0.1:70000', ''])
    assert.throws(() => parseSftpListen(bad), /--swarm-bucket-sftp must be <IPv4 address>:<port>/, bad);
});

test("the SFTP server's config: keys only, SFTP only in each account's chroot, no forwarding, no TTY", () => {
  const config = sshdConfig({ host: '10.0.0.1', port: 2222, stateDir: '/d/sftp', chrootRoot: '/run/c', pidFile: '/run/c/sshd.pid' });
  for (const line of [
    'ListenAddress 10.0.0.1:2222',
    'AllowUsers slbsftp-*',
    'AuthenticationMethods publickey',
    'PasswordAuthentication no',
    'PermitRootLogin no',
    'DisableForwarding yes',
    'AllowTcpForwarding no',
    'PermitTTY no',
    'ChrootDirectory /run/c/%u',
    'ForceCommand internal-sftp -u 0007 -d /files',
    'AuthorizedKeysFile /run/c/authorized/%u',
  ])
    assert.ok(config.split('\n').includes(line), line);
  assert.equal(authorizedKey('ssh-ed25519 AAAA key\n'), 'restrict ssh-ed25519 AAAA key\n');
});

test("the holder's sshfs: nodev, nosuid, links as written, no caches, the server's key pinned", () => {
  const options = sshfsOptions().split(',');
  for (const o of [
    'allow_other',
    'nodev',
    'nosuid',
    'no_contain_symlinks',
    'dir_cache=no',
    'attr_timeout=0',
    'StrictHostKeyChecking=yes',
    'BatchMode=yes',
  ])
    assert.ok(options.includes(o), o);
  const script = holderScript('slipway-abc');
  assert.match(script, /echo "slipway-abc mounted"/);
  // The secrets come from the environment, never from the command line.
  assert.match(script, /"\$SLIPWAY_SFTP_KEY"/);
  assert.match(script, /trap 'fusermount3 -u -z \/mnt\/bucket/);
});

test("a task mounts the node's volume of each bucket, in the app's folder, with the bucket's group", () => {
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
  assert.deepEqual(Mounts.at(-1), taskBucketMount('slipway77', '/data/fs-buckets/b1', '/data/apps/app/releases/d/uploads'));
  assert.deepEqual(Groups, ['2400001']);
  // A node without the bucket's volume fails the task rather than giving it an empty folder.
  assert.match(JSON.stringify(Mounts.at(-1)), /nonexistent/);
});
