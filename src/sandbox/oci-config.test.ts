import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ociConfig, SANDBOX_INIT, type SandboxSpec } from './oci-config.js';

const spec: SandboxSpec = {
  args: ['node', 'server.js'],
  env: { PORT: '8080', GREETING: 'a=b' },
  cwd: '/srv/release',
  user: { uid: 2000001, gid: 2000001 },
  hostname: 'app',
  mounts: [
    { destination: '/srv/release', source: '/srv/release', writable: true },
    { destination: '/var/cache/toolchains', source: '/var/cache/toolchains', writable: false },
  ],
  networkNamespacePath: '/run/netns/sw77-5',
  cgroupsPath: '/slipway77/i-1/run',
  tmpBytes: 64 * 1024 * 1024,
  openFiles: 4096,
};

test('the process runs as the app user under tini, with no capabilities and no way to gain privileges', () => {
  const c = ociConfig(spec);
  assert.deepEqual(c.process.user, { uid: 2000001, gid: 2000001, additionalGids: [] });
  assert.deepEqual(c.process.args, [SANDBOX_INIT, '-g', '--', 'node', 'server.js']);
  assert.equal(c.process.noNewPrivileges, true);
  for (const set of Object.values(c.process.capabilities)) assert.deepEqual(set, []);
  assert.deepEqual(c.process.env, ['PORT=8080', 'GREETING=a=b']);
  assert.equal(c.process.cwd, '/srv/release');
});

test('the root is read-only, the system is shared read-only and only the app folders are writable', () => {
  const c = ociConfig(spec);
  assert.equal(c.root.readonly, true);
  const binds = c.mounts.filter((m) => m.type === 'bind').map((m) => `${m.destination}:${m.options.includes('rw') ? 'rw' : 'ro'}`);
  assert.deepEqual(binds, ['/usr:ro', '/etc:ro', '/srv/release:rw', '/var/cache/toolchains:ro']);
  const tmp = c.mounts.find((m) => m.destination === '/tmp');
  assert.equal(tmp?.type, 'tmpfs');
  assert.ok(tmp?.options.includes('size=65536k'));
  for (const m of c.mounts.filter((x) => x.type === 'bind')) assert.ok(m.options.includes('nosuid') && m.options.includes('nodev'));
});

test('its own PID, IPC, UTS and mount namespaces, and the network namespace the platform made', () => {
  const c = ociConfig(spec);
  assert.deepEqual(c.linux.namespaces, [
    { type: 'pid' },
    { type: 'ipc' },
    { type: 'uts' },
    { type: 'mount' },
    { type: 'network', path: '/run/netns/sw77-5' },
  ]);
  const isolated = ociConfig({ ...spec, networkNamespacePath: undefined });
  assert.deepEqual(isolated.linux.namespaces.at(-1), { type: 'network' });
  assert.equal(c.linux.cgroupsPath, '/slipway77/i-1/run');
  assert.equal(c.linux.seccomp.defaultAction, 'SCMP_ACT_ALLOW');
  const denied = c.linux.seccomp.syscalls[0]!.names;
  for (const call of ['unshare', 'setns', 'mount', 'keyctl', 'bpf', 'ptrace']) assert.ok(denied.includes(call), call);
  assert.ok(c.linux.maskedPaths.includes('/proc/kcore'));
});

test('root, an empty command and relative or escaping paths are refused', () => {
  assert.throws(() => ociConfig({ ...spec, user: { uid: 0, gid: 0 } }), /never runs as root/);
  assert.throws(() => ociConfig({ ...spec, args: [] }), /needs a command/);
  assert.throws(() => ociConfig({ ...spec, cwd: 'relative' }), /absolute path/);
  assert.throws(
    () => ociConfig({ ...spec, mounts: [{ destination: '/a/../etc', source: '/x', writable: true }] }),
    /absolute path without/,
  );
});

const layer = {
  destination: '/data/apps/app_1/releases/deployment_1',
  lower: '/data/apps/app_1/releases/deployment_1',
  upper: '/data/apps/app_1/sandboxes/i-1/upper',
  work: '/data/apps/app_1/sandboxes/i-1/work',
};

test("a release is an overlay at its own path: the release read-only below, the writes to the sandbox's layer", () => {
  const c = ociConfig({ ...spec, mounts: spec.mounts.filter((m) => !m.writable), layers: [layer] });
  assert.deepEqual(c.mounts.at(-1), {
    destination: '/data/apps/app_1/releases/deployment_1',
    type: 'overlay',
    source: 'overlay',
    options: [
      'lowerdir=/data/apps/app_1/releases/deployment_1',
      'upperdir=/data/apps/app_1/sandboxes/i-1/upper',
      'workdir=/data/apps/app_1/sandboxes/i-1/work',
      'nosuid',
      'nodev',
    ],
  });
  // Nothing binds the release folder itself into the sandbox, writable or not.
  assert.deepEqual(
    c.mounts.filter((m) => m.type === 'bind' && m.options.includes('rw')),
    [],
  );
  assert.equal(ociConfig(spec).mounts.filter((m) => m.type === 'overlay').length, 0, 'no layer unless asked for');
});

test("a release's pre-run layer is the top lower folder, above the release, below the sandbox's writes", () => {
  const preRun = '/data/apps/app_1/pre-run-layers/deployment_1';
  const c = ociConfig({ ...spec, layers: [{ ...layer, preRun }] });
  assert.equal(c.mounts.at(-1)!.options![0], `lowerdir=${preRun}:/data/apps/app_1/releases/deployment_1`);
  assert.throws(() => ociConfig({ ...spec, layers: [{ ...layer, preRun: '/data/a:/etc' }] }), /must not hold/);
});

test('a layer path overlayfs would read as something else, or a relative one, is refused', () => {
  for (const bad of ['/data/a,upperdir=/etc', '/data/a:/etc', '/data/a\\b', 'data/a', '/data/../etc']) {
    for (const key of ['lower', 'upper', 'work'] as const) {
      assert.throws(() => ociConfig({ ...spec, layers: [{ ...layer, [key]: bad }] }), /must not hold|absolute path/, `${key}=${bad}`);
    }
  }
  assert.throws(() => ociConfig({ ...spec, layers: [{ ...layer, destination: 'relative' }] }), /absolute path/);
});

test("with an identity folder, /etc is a read-only overlay of it over the host's, with nothing bound over /etc/passwd", () => {
  const c = ociConfig({ ...spec, identityFolder: '/run/bundles/i-web/etc-identity' });
  const etc = c.mounts.filter((m) => m.destination === '/etc');
  assert.deepEqual(etc, [
    {
      destination: '/etc',
      type: 'overlay',
      source: 'overlay',
      options: ['lowerdir=/run/bundles/i-web/etc-identity:/etc', 'nosuid', 'nodev'],
    },
  ]);
  // A bind over the host's /etc/passwd would be detached by the next useradd's rename.
  assert.deepEqual(
    c.mounts.filter((m) => m.destination === '/etc/passwd' || m.destination === '/etc/group'),
    [],
  );
  assert.ok(!etc[0]!.options!.some((o) => o.startsWith('upperdir=')), 'no upper folder: read-only');
  assert.throws(() => ociConfig({ ...spec, identityFolder: '/data:x/etc-identity' }), /must not hold a comma, a colon or a backslash/);
});

test("an FS bucket is bound read-write inside the release's layer, after it, and its group is the only one added", () => {
  const bucket = { destination: `${layer.destination}/uploads`, source: '/data/fs-buckets/addon_1', writable: true };
  const c = ociConfig({ ...spec, layers: [layer], sharedFolders: [bucket], groups: [2400001, 2400001] });
  const last = c.mounts.at(-1)!;
  assert.deepEqual(last, {
    destination: '/data/apps/app_1/releases/deployment_1/uploads',
    type: 'bind',
    source: '/data/fs-buckets/addon_1',
    options: ['rbind', 'rw', 'nosuid', 'nodev'],
  });
  assert.equal(c.mounts.at(-2)!.type, 'overlay', 'the layer first: the bucket sits inside it');
  assert.deepEqual(c.process.user, { uid: 2000001, gid: 2000001, additionalGids: [2400001] });
  assert.throws(() => ociConfig({ ...spec, sharedFolders: [{ ...bucket, destination: '/data/x/../../etc' }] }), /absolute path without/);
  for (const system of [0, 6, 42, 999, 65534]) assert.throws(() => ociConfig({ ...spec, groups: [system] }), /never holds a system group/);
});
