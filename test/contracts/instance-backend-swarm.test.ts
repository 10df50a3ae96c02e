/**
 * The instance backend contract against the swarm backend (root and a Docker swarm manager;
 * skipped saying why otherwise). Apart from instance-backend.test.ts because it drives the
 * machine's Docker swarm: scripts/run-tests.mjs runs it in the whole suite, not the unit suite.
 */
import { freeSwarmSubnet, makeTestSwarmBackend, swarmBackendMissing } from '../support/swarm-backend.js';
import { runInstanceBackendContract, setContractSandbox } from './instance-backend.contract.js';

let subnet: string;
runInstanceBackendContract({
  name: 'SwarmBackend',
  missing: await swarmBackendMissing(),
  async make() {
    subnet = await freeSwarmSubnet();
    const made = await makeTestSwarmBackend({ owner: 'swcontract', subnet });
    setContractSandbox(made.sandbox);
    return made;
  },
  // The next daemon's backend: the same owner and network, another object.
  reopen: async () => {
    const made = await makeTestSwarmBackend({ owner: 'swcontract', subnet });
    return { backend: made.backend, cleanup: () => made.backend.stopAll(1000) };
  },
});
