import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EnvDraft } from './browser/env-changes.js';

test('pending additions, changes and removals are saved together as the full new list', () => {
  const draft = new EnvDraft([
    { name: 'KEEP', value: '1' },
    { name: 'CHANGE', value: 'old' },
    { name: 'DROP', value: 'x' },
  ]);
  assert.equal(draft.set('NEW', 'n'), 'added');
  assert.equal(draft.set('CHANGE', 'new'), 'changed');
  draft.remove('DROP');
  assert.equal(draft.changeCount(), 3);
  assert.deepEqual(
    draft.rows().map((r) => [r.name, r.state, r.value, r.savedValue]),
    [
      ['CHANGE', 'changed', 'new', 'old'],
      ['DROP', 'removed', 'x', undefined],
      ['KEEP', 'saved', '1', undefined],
      ['NEW', 'added', 'n', undefined],
    ],
  );
  assert.deepEqual(draft.result(), [
    { name: 'CHANGE', value: 'new' },
    { name: 'KEEP', value: '1' },
    { name: 'NEW', value: 'n' },
  ]);
});

test('setting a saved value again, undoing and discarding leave nothing pending', () => {
  const draft = new EnvDraft([{ name: 'A', value: '1' }]);
  assert.equal(draft.set('A', '1'), 'unchanged');
  assert.equal(draft.changeCount(), 0);
  draft.set('A', '2');
  draft.undo('A');
  assert.equal(draft.changeCount(), 0);
  draft.set('B', 'b');
  draft.remove('B');
  assert.equal(draft.changeCount(), 0, 'removing a pending addition drops it');
  draft.set('C', 'c');
  draft.remove('A');
  draft.discard();
  assert.deepEqual(draft.result(), [{ name: 'A', value: '1' }]);
});
