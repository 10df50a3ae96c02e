import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseBackend } from './options.js';

test('--backend is local by default, swarm when asked, and anything else is refused naming both', () => {
  assert.equal(parseBackend(undefined), 'local');
  assert.equal(parseBackend('local'), 'local');
  assert.equal(parseBackend('swarm'), 'swarm');
  assert.throws(() => parseBackend('kubernetes'), /--backend must be local or swarm, not "kubernetes"/);
});
