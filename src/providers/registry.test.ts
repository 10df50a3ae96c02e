import { test } from 'node:test';
import assert from 'node:assert/strict';
import { APP_TYPES } from '../core/names.js';
import { makeProviders } from './registry.js';

test('every application type has its provider, and every provider its type', () => {
  const providers = makeProviders();
  assert.deepEqual([...providers.keys()].sort(), [...APP_TYPES].sort());
  for (const [type, provider] of providers) assert.equal(provider.name, type);
});
