import { rm } from 'node:fs/promises';
import type { Deployment } from '../store/deployments.js';
import type { SandboxIdentity } from '../sandbox/sandbox-identity.js';
import { describeSandboxExit, sandboxIdFor } from '../sandbox/describe.js';
import type { DeployRunner } from './deploy-runner.js';
import { DeploymentCancelled, PhaseError } from '../core/phase-error.js';

export interface CommitExport {
  /** The app's bare repository (read-only in the sandbox). */
  repo: string;
  /** A folder of the layout, the app user's own; the files are written into it. */
  buildDir: string;
  deployment: Pick<Deployment, 'id' | 'commit_sha'>;
  sandbox: SandboxIdentity;
  signal: AbortSignal;
}

/** The receive phase: a new, empty build folder of the app's user, holding the commit's files. */
export async function receiveCommit(runner: DeployRunner, input: CommitExport): Promise<void> {
  await rm(input.buildDir, { recursive: true, force: true });
  await runner.ownFolder(input.buildDir, input.sandbox.user);
  await exportCommit(runner, input);
}

/**
 * Writes the commit's tree into the build folder, as the app's own user in a sandbox with no
 * network that sees only the repository (read-only) and the build folder: whatever the tree
 * holds (symbolic links, odd names) is written with the app's rights, never root's. It checks
 * the tree out through a throw-away index rather than `git archive`, so the files are exactly
 * what a clone gives (`export-ignore` attributes, meant for release tarballs, drop nothing).
 */
export async function exportCommit(runner: DeployRunner, { repo, buildDir, deployment, sandbox, signal }: CommitExport): Promise<void> {
  const output: string[] = [];
  const result = await runner.execute({
    id: sandboxIdFor(deployment.id, 'export'),
    limits: sandbox.limits,
    onLine: (_stream, line) => output.push(line),
    spec: {
      args: exportArgv(repo, buildDir, deployment.commit_sha),
      env: { PATH: '/usr/bin:/bin', HOME: '/tmp', GIT_INDEX_FILE: '/tmp/export-index', LC_ALL: 'C' },
      cwd: buildDir,
      user: sandbox.user,
      hostname: 'export',
      mounts: [
        { destination: repo, source: repo, writable: false },
        { destination: buildDir, source: buildDir, writable: true },
      ],
      tmpBytes: 64 * 1024 * 1024,
      openFiles: 4096,
    },
    timeoutMs: 10 * 60_000,
    signal,
  });
  if (result.aborted) throw new DeploymentCancelled(String(signal.reason));
  if (result.exitCode !== 0) {
    throw new PhaseError(
      'receive',
      `Could not export commit ${deployment.commit_sha}: git ${describeSandboxExit(result, sandbox)}: ${output.slice(-5).join(' ')}`,
    );
  }
}

/** git checkout of every file of `commit` into `workTree`, without touching the repository's HEAD. */
export function exportArgv(repo: string, workTree: string, commit: string): string[] {
  if (!/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(commit)) throw new Error(`Not a full commit id: ${JSON.stringify(commit)}.`);
  return [
    'git',
    '--git-dir',
    repo,
    '--work-tree',
    workTree,
    '-c',
    'safe.directory=*',
    '-c',
    'core.hooksPath=/dev/null',
    'checkout',
    '--force',
    commit,
    '--',
    '.',
  ];
}
