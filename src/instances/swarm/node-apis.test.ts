/**
 * NodeApis against this machine's swarm manager (skipped, saying why, where there is none): a
 * node whose Docker API is not declared is refused with the command that declares it, and a
 * declared one is reached at its address.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { swarmBackendMissing } from '../../../test/support/swarm-backend.js';
import { updateNode } from '../../../test/support/swarm-second-node.js';
import { DockerApi } from './docker-api.js';
import { NODE_API_LABEL, NodeApiUnknownError, NodeApis } from './node-apis.js';

const missing = await swarmBackendMissing();

describe('the Docker API of the node a task runs on', { skip: missing ? `swarm: ${missing}` : false }, () => {
  const manager = new DockerApi();
  let nodeId = '';

  before(async () => {
    nodeId = (await manager.json<{ Swarm: { NodeID: string } }>({ path: '/info', what: 'describe the node' })).Swarm.NodeID;
  });

  after(async () => {
    await updateNode(manager, nodeId, (spec) => {
      delete spec.Labels?.[NODE_API_LABEL];
    });
  });

  test("the manager's own tasks use its API; another node needs its label, and says how to set it", async () => {
    const own = new NodeApis(manager);
    own.setOwnNode(nodeId);
    assert.equal(await own.of(nodeId), manager);
    // Seen from a manager that is not this node, this node is "another node" without a label.
    const elsewhere = new NodeApis(manager);
    elsewhere.setOwnNode('another-manager');
    assert.deepEqual(await own.undeclared(), [], 'its own node needs no label');
    assert.ok((await elsewhere.undeclared()).some((n) => n.endsWith(`(${nodeId})`) || n === nodeId));
    await assert.rejects(elsewhere.of(nodeId), (e: Error) => {
      assert.ok(e instanceof NodeApiUnknownError);
      assert.match(
        e.message,
        new RegExp(`docker node update --label-add ${NODE_API_LABEL}=unix:///run/slipway-nodes/<node>\\.sock ${nodeId}`),
      );
      return true;
    });
    await updateNode(manager, nodeId, (spec) => {
      spec.Labels = { ...spec.Labels, [NODE_API_LABEL]: 'ssh://elsewhere' };
    });
    await assert.rejects(elsewhere.of(nodeId), /label slipway\.docker-api: Invalid Docker API address "ssh:\/\/elsewhere"/);
    await updateNode(manager, nodeId, (spec) => {
      spec.Labels = { ...spec.Labels, [NODE_API_LABEL]: 'unix:///run/slipway-test-no-such-node.sock' };
    });
    const fresh = new NodeApis(manager);
    fresh.setOwnNode('another-manager');
    await assert.rejects((await fresh.of(nodeId)).json({ path: '/info', what: 'describe the node' }), (e: Error) => {
      assert.match(e.message, /Cannot reach the Docker API at unix:\/\/\/run\/slipway-test-no-such-node\.sock/);
      assert.match(e.message, /slipway\.docker-api label of swarm node/);
      return true;
    });
    await updateNode(manager, nodeId, (spec) => {
      spec.Labels = { ...spec.Labels, [NODE_API_LABEL]: 'unix:///var/run/docker.sock' };
    });
    const declared = await elsewhere.of(nodeId);
    assert.equal(declared.address, 'unix:///var/run/docker.sock');
    assert.ok(await declared.json({ path: '/info', what: 'describe the node' }));
    // Another test's second node may be in the swarm too.
    assert.ok((await elsewhere.declared()).some((n) => n.nodeId === nodeId));
  });
});
