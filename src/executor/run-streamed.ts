import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface StreamedRunOptions {
  /** Program and arguments, run directly: no shell. */
  argv: string[];
  /** Complete environment of the process. */
  env: Record<string, string>;
  cwd?: string;
  /** Run as this uid/gid with no supplementary groups (needs root). */
  user?: { uid: number; gid: number };
  /** Fed to the standard input, which is closed at its end (no input otherwise). */
  stdin?: Readable;
  /** What the tool is called in messages (`pg_dump`). */
  name: string;
}

export interface StreamedRun {
  /** The standard output as it comes: the tool's answer (a tar, a dump), read by the caller. */
  stdout: Readable;
  /** Resolves when the tool ended well; rejects with the end of what it said otherwise. */
  done: Promise<void>;
}

/**
 * Runs a tool whose input or output is a stream too large to hold (a base backup, a dump): its
 * output is handed over as a stream, its input piped from one. A failure says what the tool
 * printed on stderr (the last lines), never what went through the streams.
 */
export function runStreamed(o: StreamedRunOptions): StreamedRun {
  const [command, ...args] = o.argv;
  if (!command) throw new Error(`No command given for ${o.name}.`);
  const child = spawn(command, args, {
    env: o.env,
    cwd: o.cwd,
    ...(o.user ? { uid: o.user.uid, gid: o.user.gid } : {}),
    stdio: [o.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  let said = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    if (said.length < 8000) said += chunk.toString();
  });
  const fed =
    o.stdin && child.stdin
      ? pipeline(o.stdin, child.stdin).then(
          () => undefined,
          (error: Error) => error,
        )
      : Promise.resolve(undefined);
  const ended = new Promise<number | null>((resolve, reject) => {
    child.on('error', (error) => reject(new Error(`${o.name} could not start: ${error.message}`)));
    child.on('close', (code) => resolve(code));
  });
  const done = Promise.all([ended, fed]).then(([code, feedError]) => {
    if (code !== 0) throw new Error(`${o.name} failed: ${said.trim().split('\n').slice(-3).join(' ') || `exit ${code}`}`);
    // A tool that stopped reading early (EPIPE) but ended well had what it needed.
    if (feedError && !/EPIPE|premature close/i.test(feedError.message))
      throw new Error(`The input of ${o.name} could not be read: ${feedError.message}`);
  });
  return { stdout: child.stdout!, done };
}
