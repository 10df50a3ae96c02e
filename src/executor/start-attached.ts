import { type ProcessGroupExit, spawnProcessGroup } from './process-group.js';

export interface AttachedServerStart {
  /** The server, as argv (never a shell string); it must stay in the foreground. */
  argv: string[];
  cwd: string;
  /** Complete environment (nothing is inherited from the daemon). */
  env: Record<string, string>;
  /** Each line the server prints while it serves (its complaints, its start-up errors). */
  onLine?: (stream: 'out' | 'err', line: string) => void;
  /** An open descriptor of the caller's that the server gets as fd 3 (the caller still holds it). */
  fd3?: number;
  /** What the kernel sends the server when the daemon dies, even by SIGKILL; default TERM. */
  deathSignal?: 'TERM' | 'KILL' | 'INT' | 'QUIT';
}

export interface AttachedServer {
  readonly pid: number;
  /** How it ended, as soon as it has (before its output is drained); undefined while it runs. */
  exitStatus(): ProcessGroupExit | undefined;
  /**
   * Sends a signal to the server alone, not its group: a master process (HAProxy's, nginx's)
   * passes on to its workers what each signal means for them. False once it has exited.
   */
  signal(signal: NodeJS.Signals): boolean;
  /** How it ended, once it has and its output is drained. */
  readonly exited: Promise<ProcessGroupExit>;
}

/**
 * Starts a server that lives and dies with the daemon (the router's engine), unlike startServer's
 * add-on servers that outlive it: run under `setpriv --pdeathsig`, so the kernel stops it when the
 * daemon dies without stopping it, even by SIGKILL, and no orphan keeps the daemon's ports; its
 * output is read as lines while it serves; it is in its own process group, so a Ctrl-C aimed at
 * the daemon leaves the graceful stop to the daemon, and whatever it leaves behind when it exits
 * is killed. Rejects when it cannot start at all.
 */
export async function startAttachedServer(o: AttachedServerStart): Promise<AttachedServer> {
  if (o.argv.length === 0 || o.argv[0] === '') throw new Error('Cannot start a server from an empty command.');
  const argv = ['setpriv', '--pdeathsig', o.deathSignal ?? 'TERM', '--', ...o.argv];
  const group = await spawnProcessGroup({ argv, cwd: o.cwd, env: o.env, onLine: o.onLine, fd3: o.fd3 }).catch((error: Error) => {
    throw new Error(`${error.message} (setpriv comes with the Debian package util-linux)`);
  });
  // The daemon leaving through process.exit() runs no stop(): the server goes with it.
  const stopOnExit = () => void signalLeader('SIGTERM');
  const signalLeader = (signal: NodeJS.Signals): boolean => {
    if (group.exited()) return false; // its pid may already belong to another process
    try {
      process.kill(group.pid, signal);
      return true;
    } catch {
      return false;
    }
  };
  process.on('exit', stopOnExit);
  void group.done.finally(() => process.off('exit', stopOnExit));
  return { pid: group.pid, exitStatus: () => group.exitStatus(), signal: signalLeader, exited: group.done };
}
