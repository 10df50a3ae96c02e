import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { type FakePlatform, fakePlatform } from '../../test/support/fakes/fake-platform.js';
import { DeployLayout } from '../storage/deploy-layout.js';
import { parseReleaseSpec } from '../serving/release-spec.js';
import { PhaseError } from '../core/phase-error.js';
import type { AppDisks } from '../storage/app-disks.js';
import type { DiskUse } from '../core/disk-size.js';
import { budgetFailure, makeRoomBeforeBuild } from './disk-budget.js';

const MiB = 1024 * 1024;

let p: FakePlatform;
before(async () => {
  p = await fakePlatform();
});
after(async () => {
  await p.close();
});

/** What an app's filesystem reports, one figure after another; ensure() does nothing. */
function disksReporting(...uses: DiskUse[]): AppDisks {
  let i = 0;
  return { ensure: async () => undefined, use: async () => uses[Math.min(i++, uses.length - 1)] ?? null } as unknown as AppDisks;
}

test('short of space before a build, the kept releases other than the serving one go, and the log says so', async () => {
  const layout = new DeployLayout(p.dir);
  const app = p.app('short');
  const built = ['1', '2', '3'].map((c) => p.release(app, c.repeat(40)));
  const serving = built[1]!;
  p.store.deployments.setRelease({
    app_id: app.id,
    deployment_id: serving.id,
    release_dir: parseReleaseSpec(p.store.deployments.byId(serving.id)!.release_json!).releaseDir,
    start_json: p.store.deployments.byId(serving.id)!.release_json!,
    wanted: 'running',
  });
  const lines: string[] = [];
  const disks = disksReporting(
    { budgetBytes: 64 * MiB, usedBytes: 56 * MiB, freeBytes: 8 * MiB },
    { budgetBytes: 64 * MiB, usedBytes: 30 * MiB, freeBytes: 34 * MiB },
  );
  await makeRoomBeforeBuild({ disks, store: p.store, layout, appId: app.id, log: (l) => lines.push(l) });
  assert.deepEqual(readdirSync(layout.releasesFolder(app.id)), [serving.id]);
  assert.deepEqual(lines, [
    '==> Only 8 MiB of the disk budget of 64 MiB was free: kept releases other than the serving one were removed (34 MiB free now).',
  ]);
});

test('with room enough, nothing is removed', async () => {
  const layout = new DeployLayout(p.dir);
  const app = p.app('roomy');
  p.release(app, 'a'.repeat(40));
  p.release(app, 'b'.repeat(40));
  const lines: string[] = [];
  const disks = disksReporting({ budgetBytes: 64 * MiB, usedBytes: 20 * MiB, freeBytes: 44 * MiB });
  await makeRoomBeforeBuild({ disks, store: p.store, layout, appId: app.id, log: (l) => lines.push(l) });
  assert.equal(readdirSync(layout.releasesFolder(app.id)).length, 2);
  assert.deepEqual(lines, []);
});

test('a failure with the filesystem full is the budget’s, with what to do; otherwise it keeps its own', async () => {
  const full = await budgetFailure(disksReporting({ budgetBytes: 2048 * MiB, usedBytes: 2048 * MiB, freeBytes: 4096 }), 'app_x', 'build');
  assert.ok(full instanceof PhaseError);
  assert.equal(full.phase, 'build');
  assert.match(full.message, /^disk budget of 2 GiB exceeded/);
  assert.match(full.hint ?? '', /slipway scale --disk <size>/);
  assert.equal(
    await budgetFailure(disksReporting({ budgetBytes: 2048 * MiB, usedBytes: MiB, freeBytes: 2000 * MiB }), 'app_x', 'build'),
    null,
  );
  assert.equal(await budgetFailure(undefined, 'app_x', 'build'), null, 'no budget: nothing to say');
});
