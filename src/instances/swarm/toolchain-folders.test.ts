import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { usedToolchainFolders } from './toolchain-folders.js';

test('only the tool versions the environment names go into the toolchains layer', () => {
  const cache = mkdtempSync(join(tmpdir(), 'slipway-toolchains-'));
  for (const f of ['node/22.1.0/bin', 'node/24.2.0/bin', 'pnpm/9.0.0/bin', 'jdk/21/bin']) mkdirSync(join(cache, f), { recursive: true });
  const env = {
    PATH: `${cache}/pnpm/9.0.0/bin:${cache}/node/24.2.0/bin:/usr/bin:/bin`,
    JAVA_HOME: `${cache}/jdk/21`,
    ODD: `${cache}/../etc:${cache}/node/missing/bin`,
  };
  assert.deepEqual(usedToolchainFolders([cache], env), [`${cache}/jdk/21`, `${cache}/node/24.2.0`, `${cache}/pnpm/9.0.0`]);
  assert.deepEqual(usedToolchainFolders([cache], { PATH: '/usr/bin' }), []);
});
