/**
 * CC_SSH_PRIVATE_KEY (docs/behaviour.md, Private dependencies: a key for the build's private git
 * dependencies): the key is installed for the build commands only.
 *
 * It is written (0600, owned by the build user) into `<build HOME>/.ssh/slipway-build/` with a
 * known_hosts file of its own, and the build gets GIT_SSH_COMMAND naming both, so git (and the
 * package managers, which run git) authenticate with it. ssh reads `~` from the passwd entry, not
 * from HOME, so the key is named explicitly rather than left in `~/.ssh/id_*`.
 *
 * The folder is removed right after the build, whatever happened; it is never in the build
 * folder, so it cannot reach the release. The variable itself is kept out of the build commands'
 * and the instance's environment (withoutBuildOnlyVariables): a dependency's install script or
 * the running app has no reason to read it.
 */
import { join } from 'node:path';
import { RefusedPathError, UntrustedTree } from '../sandbox/untrusted-tree.js';
import { PhaseError } from '../core/phase-error.js';
import { SSH_KEY_VARIABLE } from '../core/injected-env.js';
import { shellQuote } from '../executor/shell-quote.js';

/** Folder under the build HOME holding the key and the build's known_hosts. */
export const BUILD_SSH_DIR = join('.ssh', 'slipway-build');

/**
 * The key as ssh accepts it: LF line ends and a final newline (OpenSSH refuses a key without
 * one). A value pasted on one line with literal `\n` separators is accepted too. Anything that is
 * not a PEM/OpenSSH private key is refused without showing the value.
 */
export function normalizePrivateKey(value: string): string {
  let key = value.replace(/\r\n?/g, '\n').trim();
  if (!key.includes('\n') && key.includes('\\n')) key = key.split('\\n').join('\n').trim();
  const lines = key.split('\n').map((line) => line.trim());
  const begin = /^-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----$/.exec(lines[0] ?? '');
  const end = /^-----END ([A-Z0-9 ]*)PRIVATE KEY-----$/.exec(lines[lines.length - 1] ?? '');
  if (!begin || !end || begin[1] !== end[1] || lines.length < 3) {
    throw new PhaseError(
      'build',
      `${SSH_KEY_VARIABLE} is not a private key: it must start with a "-----BEGIN ... PRIVATE KEY-----" line and end with the matching END line (its value is not shown).`,
      `Set it from the key file (the value starts with "-", hence the "--"): \`slipway env set ${SSH_KEY_VARIABLE} -- "$(cat ~/.ssh/deploy_key)"\`, with a key that has no passphrase.`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The ssh command git runs: only this key (no agent, no default identities), host keys learned
 * on first use into a known_hosts of this build, and never a prompt (a passphrase-protected key
 * or a changed host key fails instead of hanging the build).
 */
export function gitSshCommand(keyPath: string, knownHostsPath: string): string {
  return [
    'ssh',
    '-i',
    shellQuote(keyPath),
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'IdentityAgent=none',
    '-o',
    'BatchMode=yes',
    '-o',
    'StrictHostKeyChecking=accept-new',
    '-o',
    shellQuote(`UserKnownHostsFile=${knownHostsPath}`),
  ].join(' ');
}

export interface BuildSshKey {
  /** Variables to add to the build commands' environment (empty without a key). */
  env: Record<string, string>;
  /** Removes the key and its folder; safe to call more than once. */
  remove(): Promise<void>;
}

export async function installBuildSshKey(input: {
  appVars: Record<string, string>;
  /** The build's HOME. */
  home: string;
  user: { uid: number; gid: number };
  log: (line: string) => void;
}): Promise<BuildSshKey> {
  // The home belongs to the app's user: a link or a folder at these names must not make root
  // write the key, or remove anything, elsewhere.
  const home = new UntrustedTree(input.home, { name: "the build's home folder", owner: input.user, nextStep: 'then deploy again' });
  const remove = async () => {
    await home.remove(BUILD_SSH_DIR);
  };
  const fail = (error: unknown): never => {
    if (error instanceof RefusedPathError)
      throw new PhaseError('build', `Could not install ${SSH_KEY_VARIABLE} for the build: ${error.message}`, error.hint);
    throw new PhaseError('build', `Could not install ${SSH_KEY_VARIABLE} for the build: ${(error as Error).message}`);
  };
  // A key left behind by a build that was killed (daemon crash) goes now, with or without a new one.
  await remove().catch(fail);
  const value = input.appVars[SSH_KEY_VARIABLE];
  if (value === undefined || value.trim() === '') return { env: {}, remove: async () => undefined };

  const key = normalizePrivateKey(value);
  const dir = join(input.home, BUILD_SSH_DIR);
  const keyPath = join(dir, 'id');
  const knownHostsPath = join(dir, 'known_hosts');
  try {
    // Made for the build user, 0700 and 0600: ssh refuses a key that others can read.
    await home.makeFolder(BUILD_SSH_DIR, 0o700);
    await home.writeFile(`${BUILD_SSH_DIR}/id`, key, { mode: 0o600 });
    await home.writeFile(`${BUILD_SSH_DIR}/known_hosts`, '', { mode: 0o600 });
  } catch (error) {
    await remove().catch(() => undefined);
    fail(error);
  }
  input.log(
    `${SSH_KEY_VARIABLE} is installed for the build only (git uses it through GIT_SSH_COMMAND); it is removed when the build ends.`,
  );
  return { env: { GIT_SSH_COMMAND: gitSshCommand(keyPath, knownHostsPath) }, remove };
}

/**
 * A hint for a build that failed because an SSH git server refused the build (a git+ssh
 * dependency), or null when the output shows no such refusal.
 */
export function explainGitSshRefusal(output: string[], keyInstalled: boolean): string | null {
  if (!output.some((line) => line.includes('Permission denied (publickey'))) return null;
  return keyInstalled
    ? `A git server refused ${SSH_KEY_VARIABLE}: add its public key (\`ssh-keygen -y -f <key file>\`) to the repository's deploy keys, or set the key that has access, then redeploy.`
    : `A dependency is fetched with git over SSH and the server refused the build, which has no key: set ${SSH_KEY_VARIABLE} to a private key the git server accepts (\`slipway env set ${SSH_KEY_VARIABLE} -- "$(cat deploy_key)"\`), then redeploy.`;
}
