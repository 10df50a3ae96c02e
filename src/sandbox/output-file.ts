/**
 * Reads what a long-running sandbox printed from the file its monitor writes (conmon's
 * `k8s-file` log: `<time> stdout|stderr F|P <text>` per line), instead of from a pipe to the
 * daemon. The sandbox then never depends on the daemon being there to read: a daemon that stops
 * or dies leaves the app writing to the file, and the next daemon goes on reading where the last
 * one stopped (the position is saved beside the file).
 *
 * conmon replaces the file by a new one when it reaches --log-size-max (it renames a fresh file
 * over the path): the reader finishes the old file through the descriptor it holds, then opens
 * the new one from its start.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

export interface OutputLine {
  stream: 'out' | 'err';
  /** conmon cut a longer line here (`P`): the next piece of the same stream continues it. */
  partial: boolean;
  text: string;
}

/** One line of conmon's k8s-file format; undefined for anything else. */
export function parseOutputLine(line: string): OutputLine | undefined {
  const match = /^\S+ (stdout|stderr) ([FP]) ?(.*)$/s.exec(line);
  if (!match) return undefined;
  return { stream: match[1] === 'stdout' ? 'out' : 'err', partial: match[2] === 'P', text: match[3] ?? '' };
}

/** Where reading stopped: the file (inode) and the byte offset in it. */
interface Position {
  ino: number;
  offset: number;
}

const POLL_MS = 100;
const SAVE_EVERY_MS = 1000;
/** A line longer than this is passed on in pieces (the app's own lines are cut by conmon at 8 KiB anyway). */
const MAX_CARRY = 64 * 1024;

export class OutputFileTail {
  private fd: number | undefined;
  private position: Position | undefined;
  private timer: NodeJS.Timeout | undefined;
  private carry = '';
  private decoder = new StringDecoder('utf8');
  private readonly pieces: Record<'out' | 'err', string> = { out: '', err: '' };
  private lastSave = 0;
  private savedOffset = -1;

  /**
   * @param path the file the monitor writes
   * @param positionFile where the position is kept between daemons
   */
  constructor(
    private readonly path: string,
    private readonly positionFile: string,
    private readonly onLine: (stream: 'out' | 'err', line: string) => void,
  ) {}

  /** Starts reading: from the saved position when it names the current file, else from its start. */
  start(): void {
    const saved = readPosition(this.positionFile);
    this.openCurrent(saved);
    this.timer = setInterval(() => this.poll(), POLL_MS);
    this.timer.unref();
  }

  /** Reads whatever is in the file now (the sandbox ended: its last lines). */
  flush(): void {
    this.poll();
    for (const stream of ['out', 'err'] as const) {
      if (this.pieces[stream]) this.emit(stream, this.pieces[stream]);
      this.pieces[stream] = '';
    }
  }

  /** Stops reading and saves the position, so the next daemon starts there. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.save(true);
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private openCurrent(saved?: Position): void {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return; // not written yet
    }
    const ino = fstatSync(fd).ino;
    this.fd = fd;
    this.position = { ino, offset: saved && saved.ino === ino ? saved.offset : 0 };
    this.carry = '';
    this.decoder = new StringDecoder('utf8');
  }

  private poll(): void {
    if (this.fd === undefined) {
      this.openCurrent();
      if (this.fd === undefined) return;
    }
    this.readToEnd();
    // At the end of this file: a newer one replaced it? Then read that from its start.
    let currentIno: number | undefined;
    try {
      currentIno = statSync(this.path).ino;
    } catch {
      currentIno = undefined;
    }
    if (currentIno !== undefined && currentIno !== this.position?.ino) {
      this.readToEnd();
      closeSync(this.fd!);
      this.fd = undefined;
      this.openCurrent();
      if (this.fd !== undefined) this.readToEnd();
    }
    this.save(false);
  }

  private readToEnd(): void {
    const fd = this.fd;
    const position = this.position;
    if (fd === undefined || !position) return;
    const buffer = Buffer.allocUnsafe(64 * 1024);
    for (let rounds = 0; rounds < 64; rounds++) {
      const n = readSync(fd, buffer, 0, buffer.length, position.offset);
      if (n <= 0) return;
      position.offset += n;
      const lines = (this.carry + this.decoder.write(buffer.subarray(0, n))).split('\n');
      this.carry = lines.pop() ?? '';
      if (this.carry.length > MAX_CARRY) this.carry = '';
      for (const line of lines) this.take(line);
    }
  }

  private take(raw: string): void {
    const line = parseOutputLine(raw);
    if (!line) return;
    const text = this.pieces[line.stream] + line.text;
    if (line.partial && text.length < MAX_CARRY) {
      this.pieces[line.stream] = text;
      return;
    }
    this.pieces[line.stream] = '';
    this.emit(line.stream, text);
  }

  private emit(stream: 'out' | 'err', line: string): void {
    try {
      this.onLine(stream, line);
    } catch {
      // A failing log sink must not stop the reading.
    }
  }

  private save(force: boolean): void {
    const position = this.position;
    if (!position || position.offset === this.savedOffset) return;
    if (!force && Date.now() - this.lastSave < SAVE_EVERY_MS) return;
    try {
      writeFileSync(this.positionFile, `${position.ino} ${position.offset}\n`, { mode: 0o600 });
      this.savedOffset = position.offset;
      this.lastSave = Date.now();
    } catch {
      // The sandbox's folder is gone (it ended): nothing to resume.
    }
  }
}

function readPosition(path: string): Position | undefined {
  try {
    const [ino, offset] = readFileSync(path, 'utf8').trim().split(' ').map(Number);
    return Number.isInteger(ino) && Number.isInteger(offset) ? { ino: ino!, offset: offset! } : undefined;
  } catch {
    return undefined;
  }
}
