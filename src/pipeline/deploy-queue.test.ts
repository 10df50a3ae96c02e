import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeployQueue, type Turn } from './deploy-queue.js';

test('an app runs its deployments one at a time; another app does not wait for it', async () => {
  const queue = new DeployQueue();
  const events: string[] = [];
  const step = (name: string, ms: number) => async () => {
    events.push(`start ${name}`);
    await sleep(ms);
    events.push(`end ${name}`);
  };
  queue.add('a', 'a1', step('a1', 30));
  queue.add('a', 'a2', step('a2', 0));
  queue.add('b', 'b1', step('b1', 0));
  assert.ok(queue.busy('a') && queue.busy('b'));
  await queue.idle();
  assert.deepEqual(events.slice(0, 2), ['start a1', 'start b1']);
  assert.ok(events.indexOf('start a2') > events.indexOf('end a1'), events.join(', '));
  assert.equal(queue.busy('a'), false);
});

test('a failed deployment does not stop the next one', async () => {
  const queue = new DeployQueue();
  let ran = false;
  queue.add('a', 'a1', async () => {
    throw new Error('broken');
  });
  queue.add('a', 'a2', async () => {
    ran = true;
  });
  await queue.idle();
  assert.ok(ran);
});

test('cancel aborts the running deployment and, when asked, tells the waiting ones before they start', async () => {
  const queue = new DeployQueue();
  const turns = new Map<string, Turn>();
  const hold = (id: string) => async (turn: Turn) => {
    turns.set(id, turn);
    if (turn.cancelledBeforeStart === undefined && !turn.signal.aborted)
      await new Promise((resolve) => turn.signal.addEventListener('abort', resolve, { once: true }));
  };
  queue.add('a', 'a1', hold('a1'));
  queue.add('a', 'a2', hold('a2'));
  await sleep(0);
  assert.deepEqual(queue.cancel('a', 'the user asked', true).sort(), ['a1', 'a2']);
  await queue.idle();
  const first = turns.get('a1')!;
  assert.ok(first.cancelledBeforeStart === undefined && first.signal.aborted);
  assert.equal(first.signal.reason, 'the user asked');
  assert.deepEqual(turns.get('a2'), { cancelledBeforeStart: 'the user asked' });
  assert.deepEqual(queue.cancel('a', 'again'), [], 'nothing runs any more');
});
