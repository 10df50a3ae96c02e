import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appTypes, makeProviders } from './registry.js';
import { APP_TYPES } from './app-types.js';

test('every provider is registered under its own name, and is an application type with a label', () => {
  const providers = makeProviders();
  for (const [type, provider] of providers) assert.equal(provider.name, type);
  assert.deepEqual(
    appTypes().map((t) => t.name),
    [...providers.keys()],
  );
  for (const t of appTypes()) assert.ok(t.label.trim().length > 0, `${t.name} has no label`);
  // The list the CLI reads without loading the providers is the registry's, in its order.
  assert.deepEqual(APP_TYPES, appTypes());
});
