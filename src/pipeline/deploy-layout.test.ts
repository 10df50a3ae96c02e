import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeployLayout } from './deploy-layout.js';

// Data folders made by earlier versions are found at these paths (daemon/migrate-app-folders.ts
// walks the same ones): a change here is a data folder migration.
test('the deployment folders of an app, in the data folder', () => {
  const layout = new DeployLayout('/var/lib/slipway');
  assert.deepEqual(
    {
      build: layout.buildFolder('app_1'),
      secrets: layout.buildSecretsFolder('app_1'),
      scratch: layout.scratchFolder('deployment_2'),
      releases: layout.releasesFolder('app_1'),
      release: layout.releaseFolder('app_1', 'deployment_3'),
      cache: layout.appCacheFolder('app_1'),
      home: layout.buildHome('app_1'),
    },
    {
      build: '/var/lib/slipway/builds/app_1',
      secrets: '/var/lib/slipway/builds/app_1.secrets',
      scratch: '/var/lib/slipway/builds/deployment_2',
      releases: '/var/lib/slipway/releases/app_1',
      release: '/var/lib/slipway/releases/app_1/deployment_3',
      cache: '/var/lib/slipway/cache/apps/app_1',
      home: '/var/lib/slipway/cache/apps/app_1/home',
    },
  );
});
