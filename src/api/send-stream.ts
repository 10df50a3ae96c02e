import type { Readable, Writable } from 'node:stream';

/** The client read nothing for the allowed time: the download is ended and frees what it held. */
export class StalledDownload extends Error {
  constructor(idleMs: number) {
    super(`the client read nothing for ${Math.round(idleMs / 1000)} s`);
  }
}

/**
 * Writes `source` to the client with backpressure, and gives up when the client makes no
 * progress for `idleMs` (it stopped reading) or goes away: the caller's job (a scratch copy
 * of a database, a backup slot) must not be held by a connection nobody reads.
 */
export async function sendWithIdleTimeout(to: Writable, source: Readable, idleMs: number): Promise<void> {
  for await (const chunk of source) {
    if (to.destroyed) throw new Error('the client went away');
    if (!to.write(chunk)) await drained(to, idleMs);
  }
}

function drained(to: Writable, idleMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer);
      to.off('drain', onDrain);
      to.off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = () => done();
    const onClose = () => done(new Error('the client went away'));
    const timer = setTimeout(() => done(new StalledDownload(idleMs)), idleMs);
    to.on('drain', onDrain);
    to.on('close', onClose);
  });
}
