/**
 * The instance backend contract against the fake backend (always; it runs no process, so the
 * process tests are skipped saying so). The local and swarm ones have files of their own,
 * instance-backend-local.test.ts and instance-backend-swarm.test.ts: they need root and the
 * machine (namespaces and control groups, the Docker swarm), so they run in the whole suite and
 * not in the unit suite.
 */
import { FakeInstanceBackend } from '../support/fakes/fake-instance-backend.js';
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
