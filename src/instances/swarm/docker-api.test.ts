import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDockerEndpoint } from './docker-api.js';

test("a node's Docker API is a unix socket or a TCP address; anything else is refused", () => {
  assert.deepEqual(parseDockerEndpoint('/var/run/docker.sock'), { socketPath: '/var/run/docker.sock' });
  assert.deepEqual(parseDockerEndpoint('unix:///run/slipway-nodes/w2.sock'), { socketPath: '/run/slipway-nodes/w2.sock' });
  assert.deepEqual(parseDockerEndpoint('tcp://10.0.0.2:2375'), { host: '10.0.0.2', port: 2375 });
  assert.deepEqual(parseDockerEndpoint('tcp://[fd00::2]:2375'), { host: 'fd00::2', port: 2375 });
  for (const bad of ['unix://relative.sock', 'ssh://w2', 'tcp://w2', 'w2:2375', 'tcp://w2:2375/path']) {
    assert.throws(() => parseDockerEndpoint(bad), /Invalid Docker API address/, bad);
  }
});
