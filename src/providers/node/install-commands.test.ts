import assert from 'node:assert/strict';
import { it } from 'node:test';
import { berryNodeLinker } from './install-commands.js';

it("Yarn berry's linker: YARN_NODE_LINKER, else nodeLinker in .yarnrc.yml, else Plug'n'Play", () => {
  assert.equal(berryNodeLinker(undefined, {}), 'pnp');
  assert.equal(berryNodeLinker('enableTelemetry: false\n', {}), 'pnp');
  assert.equal(berryNodeLinker('nodeLinker: node-modules\n', {}), 'node-modules');
  assert.equal(berryNodeLinker('enableTelemetry: false\nnodeLinker: "pnpm"  # hoisting\n', {}), 'pnpm');
  assert.equal(berryNodeLinker("nodeLinker: 'pnp'\n", {}), 'pnp');
  assert.equal(berryNodeLinker('  nodeLinker: node-modules\n', {}), 'pnp', 'an indented key belongs to another mapping');
  assert.equal(berryNodeLinker('nodeLinker: pnp\n', { YARN_NODE_LINKER: 'node-modules' }), 'node-modules');
});
