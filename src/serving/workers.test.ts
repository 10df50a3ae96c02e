import { test } from 'node:test';
import assert from 'node:assert/strict';
import { workersFrom } from './workers.js';

test('workers come from CC_WORKER_COMMAND and its numbered siblings, in order, run by bash', () => {
  const workers = workersFrom({
    CC_WORKER_COMMAND_10: 'node b.js',
    CC_WORKER_COMMAND: 'node a.js',
    CC_WORKER_COMMAND_2: 'node c.js',
    CC_WORKER_COMMAND_3: '  ',
    OTHER: 'x',
  });
  assert.deepEqual(
    workers.map((w) => [w.name, w.command]),
    [
      ['worker', ['bash', '-c', 'node a.js']],
      ['worker-2', ['bash', '-c', 'node c.js']],
      ['worker-10', ['bash', '-c', 'node b.js']],
    ],
  );
  assert.equal(workers[0]!.restart, 'on-failure');
  assert.equal(workers[0]!.restartDelayMs, 1000);
});

test('restart policy and delay are read and checked', () => {
  const [w] = workersFrom({ CC_WORKER_COMMAND: 'x', CC_WORKER_RESTART: 'always', CC_WORKER_RESTART_DELAY: '2.5' });
  assert.equal(w!.restart, 'always');
  assert.equal(w!.restartDelayMs, 2500);
  assert.throws(() => workersFrom({ CC_WORKER_RESTART: 'sometimes' }), /always, on-failure or no/);
  assert.throws(() => workersFrom({ CC_WORKER_RESTART_DELAY: '-1' }), /number of seconds/);
  assert.deepEqual(workersFrom({}), []);
});
