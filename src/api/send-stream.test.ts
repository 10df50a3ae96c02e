import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable, Writable } from 'node:stream';
import { StalledDownload, sendWithIdleTimeout } from './send-stream.js';

/** A client whose reading is held at will: each write waits until `reading` is true. */
function client() {
  const received: Buffer[] = [];
  const held: Array<() => void> = [];
  let reading = true;
  const stream = new Writable({
    highWaterMark: 4,
    write(chunk: Buffer, _encoding, callback) {
      received.push(chunk);
      if (reading) callback();
      else held.push(callback);
    },
  });
  return {
    stream,
    received,
    stop: () => (reading = false),
    resume: () => {
      reading = true;
      for (const callback of held.splice(0)) callback();
    },
  };
}

/** `chunks` separate buffers of 8 bytes, produced on demand. */
const source = (chunks: number) =>
  Readable.from(
    (function* () {
      for (let i = 0; i < chunks; i++) yield Buffer.alloc(8, 1);
    })(),
  );

test('a client that reads gets every byte', async () => {
  const c = client();
  await sendWithIdleTimeout(c.stream, source(50), 200);
  assert.equal(Buffer.concat(c.received).length, 400);
});

test('a client that stops reading is given up after the idle time, and the source is ended', async () => {
  const c = client();
  c.stop();
  const from = source(1_000_000);
  const started = Date.now();
  await assert.rejects(sendWithIdleTimeout(c.stream, from, 150), (error: Error) => {
    assert.ok(error instanceof StalledDownload);
    assert.match(error.message, /the client read nothing for 0 s/);
    return true;
  });
  assert.ok(Date.now() - started >= 140, 'not before the idle time');
  assert.ok(from.destroyed, 'the source stops producing');
});

test('a slow client that keeps reading is not given up', async () => {
  const c = client();
  c.stop();
  const timer = setInterval(() => {
    c.resume();
    c.stop();
  }, 50);
  try {
    // Six waits of about 50 ms each: longer together than the idle time, each shorter.
    await sendWithIdleTimeout(c.stream, source(6), 120);
  } finally {
    clearInterval(timer);
  }
  c.resume();
  await new Promise<void>((resolve) => c.stream.end(resolve));
  assert.equal(Buffer.concat(c.received).length, 48);
});

test('a client that goes away ends the download at once', async () => {
  const c = client();
  c.stop();
  const sending = sendWithIdleTimeout(c.stream, source(1_000), 60_000);
  setTimeout(() => c.stream.destroy(), 20);
  await assert.rejects(sending, /the client went away/);
});
