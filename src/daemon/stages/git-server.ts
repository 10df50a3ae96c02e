import { join } from 'node:path';
import type { DiskReserve } from '../../storage/disk-reserve.js';
import type { EgressGuard } from '../../network/egress-guard.js';
import type { Deployer } from '../../pipeline/deployer.js';
import type { RepoStore } from '../../receiver/repo-store.js';
import { GitSshServer } from '../../receiver/ssh-git-server.js';
import type { Store } from '../../store/store.js';
import { makeReceiverHooks } from '../receiver-hooks.js';
import { endpointsOf } from './endpoints.js';
import type { DaemonBase, SandboxesBuilt } from './stage.js';

/**
 * The git server over SSH: a push to an app's repository starts its deployment. Needs: `store`,
 * `repos`, `deployer`, `reserve`, the sandboxes' `disks`, `egress` (told its port). Provides:
 * `sshPort`, the port it listens on.
 */
export async function gitServer(
  needs: DaemonBase &
    Pick<SandboxesBuilt, 'disks'> & { store: Store; repos: RepoStore; deployer: Deployer; reserve: DiskReserve; egress: EgressGuard },
) {
  const { options, store, repos, deployer, reserve, disks, egress, stoppers, log } = needs;
  const ssh = new GitSshServer({
    host: options.listen,
    port: options.sshPort,
    hostKeyPath: join(options.dataDir, 'ssh_host_ed25519_key'),
    repos,
    hooks: makeReceiverHooks(store, deployer, endpointsOf(options), disks, reserve),
    log,
  });
  const { port: sshPort } = await ssh.start();
  egress.addOwnPort(sshPort, 'git server');
  stoppers.control('git over SSH', () => ssh.stop());
  return { sshPort };
}
