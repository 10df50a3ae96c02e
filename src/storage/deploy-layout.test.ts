import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeployLayout } from './deploy-layout.js';

// Data folders made by earlier versions are found at the legacy paths (daemon/migrate-app-folders.ts
// moves them into the app's own folder): a change here is a data folder migration.
test('the deployment folders of an app, in the data folder', () => {
  const layout = new DeployLayout('/var/lib/slipway');
  assert.deepEqual(
    {
      build: layout.buildFolder('app_1'),
      secrets: layout.buildSecretsFolder('app_1'),
      scratch: layout.scratchFolder('app_1', 'deployment_2'),
      releases: layout.releasesFolder('app_1'),
      release: layout.releaseFolder('app_1', 'deployment_3'),
      cache: layout.appCacheFolder('app_1'),
      home: layout.buildHome('app_1'),
      repository: layout.repository('app_1'),
      image: layout.diskImage('app_1'),
      legacy: layout.legacyFolders('app_1'),
    },
    {
      build: '/var/lib/slipway/apps/app_1/build',
      secrets: '/var/lib/slipway/build-secrets/app_1',
      scratch: '/var/lib/slipway/apps/app_1/scratch/deployment_2',
      releases: '/var/lib/slipway/apps/app_1/releases',
      release: '/var/lib/slipway/apps/app_1/releases/deployment_3',
      cache: '/var/lib/slipway/apps/app_1/cache',
      home: '/var/lib/slipway/apps/app_1/cache/home',
      repository: '/var/lib/slipway/apps/app_1/repo.git',
      image: '/var/lib/slipway/disks/app_1.img',
      legacy: {
        releases: '/var/lib/slipway/releases/app_1',
        cache: '/var/lib/slipway/cache/apps/app_1',
        repository: '/var/lib/slipway/repos/app_1.git',
      },
    },
  );
});
