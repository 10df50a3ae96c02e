import { closeSync, openSync, readFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnProcessGroup } from './process-group.js';

const env = { PATH: '/usr/bin:/bin', LC_ALL: 'C' };

test('a report pipe is fd 3 of the process, read apart from its output', async () => {
  const lines: string[] = [];
  const group = await spawnProcessGroup({
    argv: ['sh', '-c', 'echo out; echo report >&3; echo err >&2'],
    cwd: '/',
    env,
    reportPipe: true,
    onLine: (stream, line) => lines.push(`${stream}: ${line}`),
  });
  assert.ok(group.report, 'the report stream is given');
  let report = '';
  group.report.on('data', (c: Buffer) => (report += c.toString()));
  const ended = new Promise((r) => group.report!.once('close', r));
  assert.equal((await group.done).exitCode, 0);
  await ended;
  assert.equal(report, 'report\n');
  assert.deepEqual(lines.sort(), ['err: err', 'out: out']);
});

test('without a report pipe fd 3 is not open in the process', async () => {
  const group = await spawnProcessGroup({ argv: ['sh', '-c', 'echo x >&3'], cwd: '/', env });
  assert.equal(group.report, undefined);
  assert.notEqual((await group.done).exitCode, 0, 'writing to fd 3 fails');
});

test('a descriptor of the caller is fd 3 of the process', async () => {
  const file = join(tmpdir(), `slipway-fd3-${process.pid}.txt`);
  const fd = openSync(file, 'w');
  try {
    const group = await spawnProcessGroup({ argv: ['sh', '-c', 'echo handed >&3'], cwd: '/', env, fd3: fd });
    assert.equal((await group.done).exitCode, 0);
    assert.equal(readFileSync(file, 'utf8'), 'handed\n');
    await assert.rejects(spawnProcessGroup({ argv: ['true'], cwd: '/', env, fd3: fd, reportPipe: true }), /one fd 3/);
  } finally {
    closeSync(fd);
    unlinkSync(file);
  }
});
