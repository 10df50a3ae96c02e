import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type FakePlatform, fakePlatform } from '../../test/support/fakes/fake-platform.js';
import { DeployLayout } from '../storage/deploy-layout.js';
import { parseReleaseSpec } from '../serving/release-spec.js';
import { pruneReleases } from './release-retention.js';

let p: FakePlatform;
before(async () => {
  p = await fakePlatform();
});
after(async () => {
  await p.close();
});

test('the serving release and the newest ones stay; older folders and anything else go, links unfollowed', async () => {
  const layout = new DeployLayout(p.dir);
  const app = p.app('retention');
  const built = ['1', '2', '3', '4'].map((c) => p.release(app, c.repeat(40)));
  const folderOf = (d: (typeof built)[number]) => parseReleaseSpec(p.store.deployments.byId(d.id)!.release_json!).releaseDir;
  // A rollback made the oldest one serve again.
  p.store.deployments.setRelease({
    app_id: app.id,
    deployment_id: built[0]!.id,
    release_dir: folderOf(built[0]!),
    start_json: p.store.deployments.byId(built[0]!.id)!.release_json!,
    wanted: 'running',
  });
  const outside = join(p.dir, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'keep-me'), 'root-owned');
  symlinkSync(outside, join(layout.releasesFolder(app.id), 'link-out'));

  // A release built before per-app filesystems, still in the shared folder.
  const legacy = layout.legacyFolders(app.id).releases;
  mkdirSync(join(legacy, 'deployment_old'), { recursive: true });

  await pruneReleases(p.store, layout, app.id, 2);

  assert.deepEqual(readdirSync(layout.releasesFolder(app.id)).sort(), [built[0]!.id, built[3]!.id].sort());
  assert.ok(existsSync(join(outside, 'keep-me')), 'the link was removed, not what it points to');
  assert.deepEqual(readdirSync(legacy), [], 'an older release in the shared folder goes too');
});
