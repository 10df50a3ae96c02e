import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asText, encodeCommand, parseReply, RespError } from './resp.js';

test('commands are encoded as arrays of bulk strings, text and bytes alike', () => {
  assert.equal(encodeCommand(['SET', 'k', 'é']).toString(), '*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\né\r\n');
  const key = Buffer.from([0x00, 0x0d, 0x0a]);
  assert.deepEqual(encodeCommand(['DEL', key]), Buffer.concat([Buffer.from('*2\r\n$3\r\nDEL\r\n$3\r\n'), key, Buffer.from('\r\n')]));
});

test('replies are parsed as bytes, and an incomplete one says how much it needs', () => {
  const payload = Buffer.from([0x00, 0xff, 0x0d, 0x0a, 0x80]);
  const whole = Buffer.concat([Buffer.from('*2\r\n$5\r\n'), payload, Buffer.from('\r\n:-2\r\n')]);
  const parsed = parseReply(whole);
  assert.ok('reply' in parsed);
  const [dumped, ttl] = parsed.reply as [Buffer, number];
  assert.deepEqual(dumped, payload, 'CR LF inside a bulk string is data');
  assert.equal(ttl, -2);
  assert.equal(parsed.next, whole.length);
  assert.deepEqual(parseReply(whole.subarray(0, 9)), { need: 4 + 4 + 5 + 2 });
  assert.deepEqual(parseReply(Buffer.from('+O')), { need: 3 });
  assert.deepEqual(parseReply(Buffer.from('$5\r\nhel')), { need: 11 });
  const refused = parseReply(Buffer.from('-ERR no such key\r\n'));
  assert.ok('reply' in refused && refused.reply instanceof RespError && refused.reply.message === 'ERR no such key');
});

test('a reply read as text has its bulk strings decoded as UTF-8, nested ones too', () => {
  const parsed = parseReply(Buffer.from('*3\r\n$2\r\n\xc3\xa9\r\n:3\r\n*1\r\n$-1\r\n', 'latin1'));
  assert.ok('reply' in parsed);
  assert.deepEqual(asText(parsed.reply), ['é', 3, [null]]);
});
