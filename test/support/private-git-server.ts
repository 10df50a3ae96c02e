/**
 * A private git host for the tests: slipway's own SSH git endpoint (GitSshServer, ssh2 + the
 * real `git upload-pack`) on a loopback port, with hooks that let exactly one key fetch exactly
 * one repository, and nothing push. It is separate from the daemon under test: its own host key,
 * its own repositories, its own keys.
 */
import { startRemoteHost } from './remote-host.js';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitSshServer } from '../../src/receiver/ssh-git-server.js';
import { RepoStore } from '../../src/receiver/repo-store.js';
import { commitAll } from './deploy.js';

export interface PrivateGitServer {
  /** `git+ssh://git@<remote host>:<port>/<repo>.git`: a package.json dependency spec. */
  dependencyUrl: string;
  /** The private key allowed to fetch (OpenSSH format, as ssh-keygen writes it). */
  privateKey: string;
  /** One line per key offered: `<fingerprint> accepted|refused`, and per fetch: `fetch <repo>`. */
  events: string[];
  /** Operator diagnostics of the server. */
  diagnostics: string[];
  stop(): Promise<void>;
}

function fingerprint(publicKeyPath: string): string {
  return execFileSync('ssh-keygen', ['-lf', publicKeyPath], { encoding: 'utf8' }).split(' ')[1]!;
}

/** Serves `packageDir` (committed into a bare repository on master) to the holder of a fresh key. */
export async function startPrivateGitServer(packageDir: string): Promise<PrivateGitServer> {
  const work = mkdtempSync(join(tmpdir(), 'slipway-private-git-'));
  const keyPath = join(work, 'deploy_key');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'slipway-test-deploy-key', '-f', keyPath]);
  const allowed = fingerprint(`${keyPath}.pub`);

  // The repository name must look like an app id: the endpoint accepts nothing else.
  const repo = `app_${randomUUID()}`;
  const repos = new RepoStore(join(work, 'repos'));
  const checkout = join(work, 'package');
  cpSync(packageDir, checkout, { recursive: true });
  execFileSync('git', ['init', '-q', '-b', 'master'], { cwd: checkout });
  commitAll(checkout, 'package');
  execFileSync('git', ['clone', '-q', '--bare', checkout, repos.pathFor(repo)]);

  const events: string[] = [];
  const diagnostics: string[] = [];
  // The git host is elsewhere on the network, as a real one is: builds never reach this machine's own addresses.
  const remote = startRemoteHost();
  const server = new GitSshServer({
    host: remote.hostSideAddress,
    port: 0,
    hostKeyPath: join(work, 'host', 'ssh_host_ed25519_key'),
    repos,
    log: (line) => diagnostics.push(line),
    hooks: {
      async authenticate(key) {
        const ok = key.fingerprint === allowed;
        events.push(`${key.fingerprint} ${ok ? 'accepted' : 'refused'}`);
        return ok ? 'deploy-key' : null;
      },
      async authorize(userId, appId, access) {
        if (access === 'fetch') events.push(`fetch ${appId}`);
        return userId === 'deploy-key' && appId === repo && access === 'fetch';
      },
      async onPush() {
        throw new Error('this test server is read-only');
      },
    },
  });
  const { port } = await server.start();
  await remote.expose(port);
  return {
    dependencyUrl: `git+ssh://git@${remote.address}:${port}/${repo}.git`,
    privateKey: readFileSync(keyPath, 'utf8'),
    events,
    diagnostics,
    stop: async () => {
      await server.stop();
      remote.close();
    },
  };
}
