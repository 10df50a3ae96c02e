import { test } from 'node:test';
import assert from 'node:assert/strict';
import { swarmNodeOf } from './swarm-checks.js';

test('a node outside any swarm, or a worker, is refused with what to run', () => {
  assert.throws(() => swarmNodeOf({}), /not part of a swarm \(state: inactive\).*docker swarm init/);
  assert.throws(() => swarmNodeOf({ Swarm: { LocalNodeState: 'pending' } }), /state: pending/);
  assert.throws(
    () => swarmNodeOf({ Swarm: { LocalNodeState: 'active', ControlAvailable: false } }),
    /worker, not a manager.*docker node promote/,
  );
  assert.deepEqual(
    swarmNodeOf({
      ServerVersion: '20.10',
      Swarm: { LocalNodeState: 'active', ControlAvailable: true, NodeID: 'n1', Managers: 1, Nodes: 3 },
    }),
    {
      nodeId: 'n1',
      serverVersion: '20.10',
      managers: 1,
      nodes: 3,
    },
  );
});
