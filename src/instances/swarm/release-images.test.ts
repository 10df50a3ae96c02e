import { test } from 'node:test';
import assert from 'node:assert/strict';
import { repositoryName, tagName } from './release-images.js';
import { layerDockerfile, relativeToRoot } from './build-context.js';
import { baseImageTag } from './base-image.js';
import { pinnedName, pushedDigest } from './image-transfer.js';

test('app and deployment ids become valid repository names and tags, distinct for distinct ids', () => {
  assert.equal(repositoryName('app_0f3c'), 'app_0f3c');
  assert.match(repositoryName('My App'), /^my-app-[0-9a-f]{8}$/);
  assert.notEqual(repositoryName('A'), repositoryName('a'));
  assert.equal(tagName('dep_1234'), 'dep_1234');
  assert.match(tagName('x'.repeat(200)), /^[A-Za-z0-9_.-]{1,128}$/);
});

test('a layer copies each folder to its own path, owned as asked, in JSON form', () => {
  const text = layerDockerfile('reg/base:1', [{ path: '/srv/releases/a b', owner: { uid: 5, gid: 6 } }], { 'slipway.app': 'a"b' });
  assert.equal(text, 'FROM reg/base:1\nCOPY --chown=5:6 ["srv/releases/a b","/srv/releases/a b"]\nLABEL "slipway.app"="a\\"b"\n');
  const preRun = layerDockerfile(
    'reg/app:d1',
    [{ path: '/data/pre-run-layers/d1', owner: { uid: 5, gid: 6 }, target: '/data/releases/d1' }],
    {},
  );
  assert.equal(
    preRun,
    'FROM reg/app:d1\nCOPY --chown=5:6 ["data/pre-run-layers/d1","/data/releases/d1"]\n',
    "a pre-run layer goes over the release's path",
  );
  assert.throws(() => relativeToRoot('relative/path'), /absolute/);
  assert.throws(() => relativeToRoot('/a/../etc'), /normalised/);
});

test('the base image tag changes with the Debian release and the package list', () => {
  assert.notEqual(baseImageTag('bookworm'), baseImageTag('trixie'));
  assert.notEqual(baseImageTag('bookworm', ['a']), baseImageTag('bookworm', ['b']));
  assert.match(baseImageTag('bookworm'), /^bookworm-[0-9a-f]{12}$/);
});

test("a push's digest is read from its last progress message and pins the image by content", () => {
  const digest = `sha256:${'ab'.repeat(32)}`;
  assert.equal(pushedDigest({ status: 'Pushed', progressDetail: {}, id: '1a2b' }), undefined);
  assert.equal(pushedDigest({ aux: { Tag: 'dep_1', Digest: 'md5:00', Size: 3 } }), undefined);
  assert.equal(pushedDigest({ progressDetail: {}, aux: { Tag: 'dep_1', Digest: digest, Size: 1368 } }), digest);
  assert.equal(pinnedName('127.0.0.1:5000/slipway1/app_1:dep_1', digest), `127.0.0.1:5000/slipway1/app_1@${digest}`);
  assert.throws(() => pinnedName('127.0.0.1:5000/slipway1/app_1:dep_1', 'latest'), /Not an image digest/);
});
