import { chmod } from 'node:fs/promises';
import { runCommand, type RunResult } from '../executor/run-command.js';
import { ownedFolder } from '../sandbox/owned-folder.js';
import { runSandboxed, type SandboxedRunResult } from '../sandbox/run-sandboxed.js';
import type { SandboxHost, SandboxStart } from '../sandbox/sandbox-host.js';
import type { Owner } from '../sandbox/untrusted-tree.js';

/** One command of a deployment, run to its end in a sandbox of its own. */
export interface SandboxedStep extends Pick<SandboxStart, 'id' | 'spec' | 'limits' | 'onLine'> {
  timeoutMs: number;
  /** Cancels the deployment: the sandbox is killed and the result says `aborted`. */
  signal?: AbortSignal;
}

/**
 * How the deployment's phases touch the machine: every step that runs the app's code goes
 * through `execute`, and the two things root does to the app's folders before that (make a
 * folder of the layout the app's own, hand a tree to the app's user) go through here too. The
 * phases build the steps as data; the daemon gives them sandboxRunner(), unit tests a fake that
 * records the steps and answers with scripted results.
 */
export interface DeployRunner {
  execute(step: SandboxedStep): Promise<SandboxedRunResult>;
  /** A folder of the platform's layout, made (or checked) to be the app user's own, mode 0700. */
  ownFolder(path: string, user: Owner): Promise<void>;
  /** Gives a whole tree to the app's user before anything of the app runs in it (mode 0700, chown). */
  handOver(path: string, user: Owner): Promise<RunResult>;
}

/** chown of a tree that never follows a symbolic link in it. */
export function handOverArgv(path: string, user: Owner): string[] {
  return ['chown', '-R', '-P', `${user.uid}:${user.gid}`, path];
}

/** The runner of the daemon: runc sandboxes through the sandbox host; root's chown. */
export function sandboxRunner(host: () => SandboxHost): DeployRunner {
  return {
    execute: ({ timeoutMs, signal, ...start }) => runSandboxed(host(), start, { timeoutMs, signal }),
    ownFolder: ownedFolder,
    async handOver(path, user) {
      await chmod(path, 0o700);
      // -P: never follows a symbolic link of the tree; nothing of the app runs at this point.
      return runCommand({ argv: handOverArgv(path, user), cwd: '/', env: { PATH: '/usr/bin:/bin' } });
    },
  };
}
