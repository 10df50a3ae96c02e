import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeFrame, FRAME, FrameDecoder } from './run-frames.js';

test('frames survive any chunking, binary payloads included', () => {
  const bytes = Buffer.concat([
    encodeFrame(FRAME.stdout, 'héllo\n'),
    encodeFrame(FRAME.stderr, Buffer.from([0, 255, 10])),
    encodeFrame(FRAME.exit, JSON.stringify({ code: 3, signal: null })),
  ]);
  for (const size of [1, 2, 5, 7, bytes.length]) {
    const got: Array<[number, string]> = [];
    const decoder = new FrameDecoder((type, payload) => got.push([type, payload.toString('hex')]));
    for (let i = 0; i < bytes.length; i += size) decoder.push(bytes.subarray(i, i + size));
    assert.deepEqual(got, [
      [FRAME.stdout, Buffer.from('héllo\n').toString('hex')],
      [FRAME.stderr, '00ff0a'],
      [FRAME.exit, Buffer.from('{"code":3,"signal":null}').toString('hex')],
    ]);
  }
});
