import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FairJobs, fairPick } from './fair-share.js';

const item = (org: string, n: number) => ({ org, id: `${org}${n}` });
const ids = (items: Array<{ id: string }>) => items.map((i) => i.id);

test('keys take turns: every key starts one before any starts a second', () => {
  const due = [item('a', 1), item('a', 2), item('a', 3), item('a', 4), item('b', 1), item('c', 1), item('b', 2)];
  assert.deepEqual(ids(fairPick(due, (i) => i.org, new Map(), { perKey: 2, total: 4 })), ['a1', 'b1', 'c1', 'a2']);
  assert.deepEqual(ids(fairPick(due, (i) => i.org, new Map(), { perKey: 2, total: 10 })), ['a1', 'b1', 'c1', 'a2', 'b2']);
});

test('a key at its limit gets nothing more, however old its items, and leaves the slots to the others', () => {
  const due = [item('slow', 1), item('slow', 2), item('slow', 3), item('quick', 1)];
  const running = new Map([['slow', 2]]);
  assert.deepEqual(ids(fairPick(due, (i) => i.org, running, { perKey: 2, total: 4 })), ['quick1']);
  // The total counts what runs already.
  assert.deepEqual(ids(fairPick(due, (i) => i.org, new Map([['x', 4]]), { perKey: 2, total: 4 })), []);
});

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

test("one organisation's stuck job does not delay another's; its own next job waits behind it", async () => {
  const jobs = new FairJobs({ perKey: 1, total: 2 });
  const stuck = gate();
  const order: string[] = [];
  const slow = jobs.run('slow', async () => {
    order.push('slow-1 starts');
    await stuck.opened;
    order.push('slow-1 ends');
  });
  const slowNext = jobs.run('slow', async () => void order.push('slow-2'));
  const quick = jobs.run('quick', async () => void order.push('quick'));
  await quick;
  assert.deepEqual(order, ['slow-1 starts', 'quick']);
  stuck.open();
  await Promise.all([slow, slowNext]);
  assert.deepEqual(order, ['slow-1 starts', 'quick', 'slow-1 ends', 'slow-2']);
});

test('keys are served in turn when slots are short', async () => {
  const jobs = new FairJobs({ perKey: 2, total: 1 });
  const order: string[] = [];
  const first = gate();
  const all = [
    jobs.run('a', async () => {
      await first.opened;
      order.push('a1');
    }),
    jobs.run('a', async () => void order.push('a2')),
    jobs.run('a', async () => void order.push('a3')),
    jobs.run('b', async () => void order.push('b1')),
    jobs.run('c', async () => void order.push('c1')),
  ];
  first.open();
  await Promise.all(all);
  assert.deepEqual(order, ['a1', 'b1', 'c1', 'a2', 'a3']);
});

test('an exclusive job waits for the running ones, and nothing starts beside it', async () => {
  const jobs = new FairJobs({ perKey: 1, total: 3 });
  const order: string[] = [];
  const held = gate();
  const a = jobs.run('a', async () => {
    await held.opened;
    order.push('a');
  });
  const round = jobs.run('*', async () => void order.push('round'), { exclusive: true });
  const b = jobs.run('b', async () => void order.push('b'));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, [], 'the round waits for a, and b waits for the round');
  held.open();
  await Promise.all([a, round, b]);
  assert.deepEqual(order, ['a', 'round', 'b']);
});

test('a job that throws at once, or rejects, frees its slot', async () => {
  const jobs = new FairJobs({ perKey: 1, total: 1 });
  await assert.rejects(
    jobs.run('a', () => {
      throw new Error('at once');
    }),
    /at once/,
  );
  await assert.rejects(
    jobs.run('a', async () => {
      throw new Error('later');
    }),
    /later/,
  );
  assert.equal(await jobs.run('a', async () => 'ran'), 'ran');
  assert.equal(jobs.runningNow().size, 0);
});
