import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FixedVersionCatalog } from './catalog.js';
import { listRuntimes } from './runtimes-list.js';

test('listRuntimes lists node then bun, newest first, with end of life and defaults marked', async () => {
  const catalog = new FixedVersionCatalog({
    node: ['20.20.2', '24.11.0', '26.10.0', '25.9.0'],
    bun: ['1.2.23', '1.3.1', '1.4.5'],
  });
  const rows = await listRuntimes(catalog, new Date('2026-11-21T00:00:00Z'));
  assert.deepEqual(rows, [
    { runtime: 'node', version: '26.10.0', endOfLife: false, isDefault: false },
    { runtime: 'node', version: '25.9.0', endOfLife: true, isDefault: false },
    { runtime: 'node', version: '24.11.0', endOfLife: false, isDefault: true },
    { runtime: 'node', version: '20.20.2', endOfLife: true, isDefault: false },
    { runtime: 'bun', version: '1.4.5', endOfLife: false, isDefault: false },
    { runtime: 'bun', version: '1.3.1', endOfLife: false, isDefault: true },
    { runtime: 'bun', version: '1.2.23', endOfLife: true, isDefault: false },
  ]);
});
