/**
 * The instance backend contract against the fake backend (always; it runs no process, so the
 * process tests are skipped saying so) and the local one (root only; skipped saying why
 * otherwise). The swarm one has a file of its own, instance-backend-swarm.test.ts: it needs the
 * machine's Docker swarm, so it runs in the whole suite and not in the unit suite.
 */
import { FakeInstanceBackend } from '../support/fakes/fake-instance-backend.js';
import { localBackendMissing, makeTestLocalBackend } from '../support/local-backend.js';
import { runInstanceBackendContract, setContractSandbox } from './instance-backend.contract.js';

runInstanceBackendContract({
  name: 'FakeInstanceBackend',
  runsNoProcess: 'runs no process (each instance is an HTTP server in the test process)',
  async make() {
    setContractSandbox({
      user: { uid: 60_000, gid: 60_000 },
      limits: { memoryBytes: 1 << 28, pids: 64, cpuShares: 512 },
      flavor: 'pico',
      readOnlyPaths: [],
    });
    const backend = new FakeInstanceBackend();
    return { backend, cleanup: async () => undefined };
  },
});

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
