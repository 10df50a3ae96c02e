/**
 * The instance backend contract against the local backend (root only; skipped saying why
 * otherwise). Apart from instance-backend.test.ts because it makes network namespaces, control
 * groups and a bridge: scripts/run-tests.mjs runs it in the whole suite, not the unit suite.
 */
import { localBackendMissing, makeTestLocalBackend } from '../support/local-backend.js';
import { runInstanceBackendContract, setContractSandbox } from './instance-backend.contract.js';

runInstanceBackendContract({
  name: 'LocalNetnsBackend',
  missing: localBackendMissing(),
  async make() {
    // A network of its own: local-backend.test.ts may run at the same time on another checkout.
    // A crashed instance restarts after 0.1 s instead of the daemon's 1 s: the contract checks that
    // it restarts, local-backend.test.ts the delays themselves.
    const made = await makeTestLocalBackend(
      { bridge: 'slwcontract0', subnet: '10.81.0.0/16', prefix: 'slwc', cgroupRoot: 'slwcontract' },
      { restartBackoff: { initialMs: 100 } },
    );
    setContractSandbox(made.sandbox);
    return made;
  },
  cannotAdopt:
    'the test backend keeps no instance records nor sweeps around them (test/support/local-backend.ts); the daemon adopts local instances in test/integration/data-plane.test.ts',
});
