import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeployLayout } from '../storage/deploy-layout.js';
import { PreRunLayers } from './pre-run-layer.js';

const asRoot = process.getuid?.() === 0;

function fixture() {
  const data = mkdtempSync(join(tmpdir(), 'slipway-pre-run-'));
  const layout = new DeployLayout(data);
  const release = layout.releaseFolder('app_1', 'deployment_1');
  mkdirSync(release, { recursive: true });
  return {
    data,
    layout,
    release,
    layers: new PreRunLayers(layout),
    [Symbol.dispose]: () => rmSync(data, { recursive: true, force: true }),
  };
}

/** What the hook's sandbox would leave: overlayfs' upper and work folders, the upper holding the hook's files. */
function hookWrote(capture: string, files: Record<string, string>): void {
  mkdirSync(join(capture, 'upper'), { recursive: true });
  mkdirSync(join(capture, 'work', 'work'), { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(capture, 'upper', name), text);
}

test('a captured layer is kept whole under the release name, in a folder of root only', { skip: !asRoot && 'needs root' }, async () => {
  using f = fixture();
  assert.equal(f.layers.kept('app_1', f.release), undefined);
  const capture = await f.layers.startCapture('app_1', f.release);
  assert.equal(capture, join(f.layout.preRunLayersFolder('app_1'), 'deployment_1.capture'));
  assert.equal(statSync(f.layout.preRunLayersFolder('app_1')).mode & 0o777, 0o700);
  assert.equal(f.layers.kept('app_1', f.release), undefined, 'an unfinished capture is not a kept layer');
  hookWrote(capture, { 'pre-run.txt': 'made' });
  const kept = await f.layers.keep('app_1', f.release);
  assert.equal(kept, join(f.layout.preRunLayersFolder('app_1'), 'deployment_1'));
  assert.equal(f.layers.kept('app_1', f.release), kept);
  assert.equal(readFileSync(join(kept, 'pre-run.txt'), 'utf8'), 'made');
  assert.deepEqual(readdirSync(f.layout.preRunLayersFolder('app_1')), ['deployment_1'], "overlayfs' work folder is gone");
});

test('a failed hook keeps nothing; an interrupted capture is replaced by the next', { skip: !asRoot && 'needs root' }, async () => {
  using f = fixture();
  hookWrote(await f.layers.startCapture('app_1', f.release), { 'half.txt': 'x' });
  const capture = await f.layers.startCapture('app_1', f.release);
  assert.equal(existsSync(capture), false, 'what an interrupted capture left is removed before the hook runs again');
  hookWrote(capture, { 'pre-run.txt': 'x' });
  await f.layers.discard('app_1', f.release);
  assert.deepEqual(readdirSync(f.layout.preRunLayersFolder('app_1')), []);
});

test("removing layers never follows a link the app's user left in them", { skip: !asRoot && 'needs root' }, async () => {
  using f = fixture();
  const outside = join(f.data, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'precious'), 'keep me');
  const capture = await f.layers.startCapture('app_1', f.release);
  hookWrote(capture, {});
  symlinkSync(outside, join(capture, 'upper', 'link'));
  await f.layers.keep('app_1', f.release);
  const old = f.layout.releaseFolder('app_1', 'deployment_0');
  mkdirSync(old);
  hookWrote(await f.layers.startCapture('app_1', old), {});
  symlinkSync(outside, join(f.layout.preRunLayersFolder('app_1'), 'deployment_0.capture', 'upper', 'link'));
  await f.layers.prune('app_1', new Set(['deployment_1']));
  assert.deepEqual(readdirSync(f.layout.preRunLayersFolder('app_1')), ['deployment_1'], 'the unkept capture is gone');
  await f.layers.prune('app_1', new Set());
  assert.deepEqual(readdirSync(f.layout.preRunLayersFolder('app_1')), []);
  assert.equal(readFileSync(join(outside, 'precious'), 'utf8'), 'keep me', 'what a link named is untouched');
});

test('a release folder name the platform did not make is refused', () => {
  using f = fixture();
  assert.throws(() => f.layers.kept('app_1', '/data/apps/app_1/releases/a:b'), /Unexpected release folder name/);
});
