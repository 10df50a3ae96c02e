import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateInstanceId } from './instance-id.js';

test('instance ids are checked before any use', () => {
  for (const bad of ['', '-n', '../etc', 'a b', 'a\nb', 'x'.repeat(201), '$(id)'])
    assert.throws(() => validateInstanceId(bad), /Invalid instance id/);
  assert.equal(validateInstanceId('app_1.dep-2:inst-3'), 'app_1.dep-2:inst-3');
});
