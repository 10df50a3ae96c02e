import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { AccessLogReceiver, FULL_READ_BYTES, READ_PAUSE_MS, restAfterRead } from './access-log.js';
import type { AccessRecord } from '../router.js';

test('the receiver rests after a partial read and reads on at once while a backlog waits', () => {
  assert.equal(restAfterRead(120), READ_PAUSE_MS);
  assert.equal(restAfterRead(FULL_READ_BYTES - 1), READ_PAUSE_MS);
  assert.equal(restAfterRead(FULL_READ_BYTES), 0);
});

test('a burst of many reads arrives whole: every line once, none cut at a read boundary', async () => {
  const records: AccessRecord[] = [];
  const receiver = new AccessLogReceiver(
    (backend) => (backend === 'app0' ? 'app_one' : undefined),
    (record) => records.push(record),
  );
  const port = await receiver.start();
  const lines = 50_000;
  const socket = connect(port, '127.0.0.1');
  try {
    await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    let text = '';
    for (let i = 0; i < lines; i++) {
      text += `app0 1700000000.${String(i % 1000).padStart(3, '0')} 10.0.0.1 GET /page/${i}?q=é 200 12 3 10.200.0.2:8080 0 shop.example.com\n`;
      // The 404 and ACME backends never log, but a stray line of another backend is dropped, not counted.
      if (i % 1000 === 0) text += 'unknown_host 1700000000.000 10.0.0.1 GET / 404 0 0 - 0 nowhere.test\n';
    }
    socket.end(text);
    for (let waited = 0; records.length < lines && waited < 20_000; waited += 20) await new Promise((ok) => setTimeout(ok, 20));
    assert.equal(records.length, lines);
    assert.deepEqual(
      records.map((record) => record.path),
      Array.from({ length: lines }, (_, i) => `/page/${i}?q=é`),
    );
    assert.equal(records[7]!.instance, '10.200.0.2:8080');
    assert.equal(records[7]!.host, 'shop.example.com');
  } finally {
    socket.destroy();
    receiver.stop();
  }
});
