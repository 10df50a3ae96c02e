/**
 * The instance backend contract against the swarm backend (root and a Docker swarm manager;
 * skipped saying why otherwise). Apart from instance-backend.test.ts because it drives the
 * machine's Docker swarm: scripts/run-tests.mjs runs it in the whole suite, not the unit suite.
 */
import { makeTestSwarmBackend, swarmBackendMissing } from '../support/swarm-backend.js';
import { runInstanceBackendContract, setContractSandbox } from './instance-backend.contract.js';

runInstanceBackendContract({
  name: 'SwarmBackend',
  missing: await swarmBackendMissing(),
  async make() {
    const made = await makeTestSwarmBackend({ owner: 'swcontract', subnet: '172.29.0.0/16' });
    setContractSandbox(made.sandbox);
    return made;
  },
  // The next daemon's backend: the same owner and network, another object.
  reopen: async () => {
    const made = await makeTestSwarmBackend({ owner: 'swcontract', subnet: '172.29.0.0/16' });
    return { backend: made.backend, cleanup: () => made.backend.stopAll(1000) };
  },
});
