import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Lifecycle } from './lifecycle.js';

test('subscribers are told in the order they subscribed, each awaited', async () => {
  const told: string[] = [];
  const hub = new Lifecycle(() => undefined);
  hub.on('app deleted', async ({ appId }) => {
    await new Promise((resolve) => setTimeout(resolve, 10));
    told.push(`first ${appId}`);
  });
  hub.on('app deleted', ({ appId }) => void told.push(`second ${appId}`));
  hub.on('instance replaced', () => void told.push('not this one'));
  await hub.tell('app deleted', { appId: 'app_1' });
  assert.deepEqual(told, ['first app_1', 'second app_1']);
});

test('a failing subscriber does not keep the others from being told; its failure is thrown after', async () => {
  const told: string[] = [];
  const hub = new Lifecycle(() => undefined);
  hub.on('app deleted', () => {
    throw new Error('records busy');
  });
  hub.on('app deleted', () => void told.push('second'));
  await assert.rejects(hub.tell('app deleted', { appId: 'app_1' }), /records busy/);
  assert.deepEqual(told, ['second']);
});

test('publish does not wait and logs a failure instead of throwing', async () => {
  const lines: string[] = [];
  const hub = new Lifecycle((line) => lines.push(line));
  hub.on('instance restarted', () => Promise.reject(new Error('counter gone')));
  hub.publish('instance restarted', { appId: 'app_1' });
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(lines, ['While telling "instance restarted": counter gone']);
});
