import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeLayer, removeLayer, removeLayerOf, sweepLayers } from './sandbox-layer.js';

/** A data folder with a release owned by `uid`, a bundles folder and an app's layers folder. */
function fixture(uid = process.getuid!()) {
  const root = mkdtempSync(join(tmpdir(), 'slipway-layer-'));
  const release = join(root, 'apps', 'app_1', 'releases', 'deployment_1');
  mkdirSync(release, { recursive: true, mode: 0o750 });
  writeFileSync(join(release, 'server.js'), 'original');
  chownSync(release, uid, uid);
  const bundles = join(root, 'sandboxes');
  const layers = join(root, 'apps', 'app_1', 'sandboxes');
  const bundle = (id: string) => {
    mkdirSync(join(bundles, id), { recursive: true });
    return join(bundles, id);
  };
  return { root, release, bundles, layers, bundle, [Symbol.dispose]: () => rmSync(root, { recursive: true, force: true }) };
}

// The daemon makes layers as root (chown to the app's user): so does this test.
const asRoot = process.getuid?.() === 0;

test('a layer is fresh, its upper folder looks like the release folder, and the bundle records it', {
  skip: !asRoot && 'needs root',
}, () => {
  using f = fixture(4242);
  const layer = makeLayer({ bundle: f.bundle('i-1'), layersRoot: f.layers, id: 'i-1', release: f.release, shared: false });
  assert.deepEqual(layer, {
    destination: f.release,
    lower: f.release,
    upper: join(f.layers, 'i-1', 'upper'),
    work: join(f.layers, 'i-1', 'work'),
  });
  const upper = statSync(layer.upper);
  assert.equal(upper.uid, 4242);
  assert.equal(upper.mode & 0o777, 0o750);
  assert.equal(statSync(f.layers).mode & 0o777, 0o700, "the layers are root's alone on the host");
  assert.deepEqual(readdirSync(layer.upper), [], 'nothing of an earlier sandbox of the same id');
  writeFileSync(join(layer.upper, 'implant'), 'x');
  makeLayer({ bundle: f.bundle('i-1'), layersRoot: f.layers, id: 'i-1', release: f.release, shared: false });
  assert.deepEqual(readdirSync(layer.upper), [], 'a sandbox started again under the same id starts from the release');
  removeLayerOf(join(f.bundles, 'i-1'));
  assert.equal(existsSync(join(f.layers, 'i-1')), false);
  assert.deepEqual(readdirSync(f.release), ['server.js'], 'the release folder never changes');
});

test('a release folder or layers folder that is a link is refused', { skip: !asRoot && 'needs root' }, () => {
  using f = fixture();
  const link = join(f.root, 'link');
  symlinkSync(f.release, link);
  assert.throws(
    () => makeLayer({ bundle: f.bundle('i-1'), layersRoot: f.layers, id: 'i-1', release: link, shared: false }),
    /is not a folder/,
  );
  symlinkSync('/etc', join(f.root, 'apps', 'app_1', 'other'));
  const other = join(f.root, 'apps', 'app_1', 'other');
  assert.throws(
    () => makeLayer({ bundle: f.bundle('i-2'), layersRoot: other, id: 'i-2', release: f.release, shared: false }),
    /is not a folder/,
  );
  assert.throws(
    () => makeLayer({ bundle: f.bundle('i-3'), layersRoot: f.layers, id: '../x', release: f.release, shared: false }),
    /Invalid sandbox id/,
  );
});

test("the sweep removes the layers of sandboxes without a bundle, never a kept sandbox's", { skip: !asRoot && 'needs root' }, () => {
  using f = fixture();
  makeLayer({ bundle: f.bundle('i-kept'), layersRoot: f.layers, id: 'i-kept', release: f.release, shared: false });
  makeLayer({ bundle: f.bundle('i-gone'), layersRoot: f.layers, id: 'i-gone', release: f.release, shared: false });
  rmSync(join(f.bundles, 'i-gone'), { recursive: true });
  assert.equal(sweepLayers(f.layers, f.bundles), 1);
  assert.deepEqual(readdirSync(f.layers), ['i-kept']);
  assert.equal(sweepLayers(join(f.root, 'nowhere'), f.bundles), 0, 'an app without layers');
});

test("an instance's layer is shared by its sandboxes in turn, kept when each ends, removed by its owner", {
  skip: !asRoot && 'needs root',
}, () => {
  using f = fixture();
  const shared = (bundle: string) =>
    makeLayer({ bundle: f.bundle(bundle), layersRoot: f.layers, id: 'i-1', release: f.release, shared: true });
  const layer = shared('i-1-b0');
  writeFileSync(join(layer.upper, 'lifecycle.log'), 'prestart');
  removeLayerOf(join(f.bundles, 'i-1-b0'));
  assert.deepEqual(shared('i-1'), layer);
  assert.deepEqual(readdirSync(layer.upper), ['lifecycle.log'], 'what the before-start command wrote, the main process reads');
  removeLayerOf(join(f.bundles, 'i-1'));
  assert.equal(existsSync(layer.upper), true, 'a sandbox does not remove a layer it does not own');
  removeLayer(f.layers, 'i-1');
  assert.equal(existsSync(join(f.layers, 'i-1')), false);
});

test("a pre-run hook's layer is made in its capture folder and left there when its sandbox ends", { skip: !asRoot && 'needs root' }, () => {
  using f = fixture(4242);
  const captures = join(f.root, 'apps', 'app_1', 'pre-run-layers');
  const capture = join(captures, 'deployment_1.capture');
  const layer = makeLayer({ bundle: f.bundle('hook'), layersRoot: f.layers, id: 'hook', release: f.release, shared: false, capture });
  assert.deepEqual(layer, { destination: f.release, lower: f.release, upper: join(capture, 'upper'), work: join(capture, 'work') });
  assert.equal(statSync(layer.upper).uid, 4242, 'the upper folder looks like the release folder');
  assert.equal(statSync(captures).mode & 0o777, 0o700);
  removeLayerOf(join(f.bundles, 'hook'));
  assert.equal(existsSync(layer.upper), true, "the sandbox's cleanup leaves the capture");
});

test("a release's pre-run layer sits read-only between the release and the sandbox's writes; a link is refused", {
  skip: !asRoot && 'needs root',
}, () => {
  using f = fixture();
  const preRun = join(f.root, 'apps', 'app_1', 'pre-run-layers', 'deployment_1');
  mkdirSync(preRun, { recursive: true });
  const layer = makeLayer({ bundle: f.bundle('i-1'), layersRoot: f.layers, id: 'i-1', release: f.release, shared: false, preRun });
  assert.equal(layer.preRun, preRun);
  assert.equal(layer.lower, f.release);
  const link = join(f.root, 'apps', 'app_1', 'pre-run-layers', 'deployment_2');
  symlinkSync('/etc', link);
  assert.throws(
    () => makeLayer({ bundle: f.bundle('i-2'), layersRoot: f.layers, id: 'i-2', release: f.release, shared: false, preRun: link }),
    /pre-run layer .* is not a folder/,
  );
});
