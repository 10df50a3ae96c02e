/**
 * `slipway runtimes` against a real daemon: the versions come from the npm registry through
 * the daemon's catalog (GET /v1/runtimes), with the SPEC §9 defaults and end-of-life marks.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDaemon, type TestDaemon } from '../support/daemon.js';

let daemon: TestDaemon;

before(async () => {
  daemon = await startDaemon();
});

after(async () => {
  await daemon?.stop();
});

interface Row {
  runtime: 'node' | 'bun';
  version: string;
  end_of_life: boolean;
  default: boolean;
}

test('runtimes --format json lists Node.js and Bun versions, defaults and end-of-life marked', async () => {
  const result = await daemon.cli(['runtimes', '--format', 'json']);
  assert.equal(result.code, 0, result.stderr);
  const rows = JSON.parse(result.stdout) as Row[];
  const node = rows.filter((r) => r.runtime === 'node');
  const bun = rows.filter((r) => r.runtime === 'bun');
  assert.ok(node.length > 50, `only ${node.length} Node.js versions`);
  assert.ok(bun.length > 10, `only ${bun.length} Bun versions`);
  assert.deepEqual(
    rows.filter((r) => r.default).map((r) => `${r.runtime} ${r.version}`),
    ['node 24.11.0', 'bun 1.3.1'],
  );
  // Node 16 ended in 2023; 24 is LTS until 2028.
  assert.ok(node.some((r) => r.version === '16.20.2' && r.end_of_life));
  assert.ok(node.some((r) => r.version === '24.11.0' && !r.end_of_life));
  assert.ok(
    node.some((r) => r.version === '22.11.0'),
    'the minor CC_NODE_VERSION example resolves among these',
  );
  // Newest first within each runtime.
  const majors = node.map((r) => Number(r.version.split('.')[0]));
  assert.deepEqual(
    majors,
    [...majors].sort((a, b) => b - a),
  );
  assert.ok(majors[0]! >= 24);
});

test('runtimes prints a table; --runtime bun keeps only Bun', async () => {
  const table = await daemon.cli(['runtimes']);
  assert.equal(table.code, 0, table.stderr);
  const lines = table.stdout.trim().split('\n');
  assert.match(lines[0]!, /^RUNTIME\s+VERSION\s+STATUS$/);
  assert.ok(
    lines.some((l) => /^node\s+24\.11\.0\s+default$/.test(l)),
    table.stdout,
  );
  assert.ok(
    lines.some((l) => /^node\s+16\.20\.2\s+end of life$/.test(l)),
    table.stdout,
  );
  assert.ok(
    lines.some((l) => /^bun\s+1\.3\.1\s+default$/.test(l)),
    table.stdout,
  );

  const onlyBun = await daemon.cli(['runtimes', '--runtime', 'bun', '--format', 'json']);
  assert.equal(onlyBun.code, 0, onlyBun.stderr);
  const rows = JSON.parse(onlyBun.stdout) as Row[];
  assert.ok(rows.length > 0 && rows.every((r) => r.runtime === 'bun'));

  const wrong = await daemon.cli(['runtimes', '--runtime', 'deno']);
  assert.equal(wrong.code, 2);
  assert.match(wrong.stderr, /takes node or bun/);
});

test('GET /v1/runtimes needs a token', async () => {
  const anonymous = await fetch(`${daemon.apiUrl}/v1/runtimes`);
  assert.equal(anonymous.status, 401);
  const authorized = await fetch(`${daemon.apiUrl}/v1/runtimes`, { headers: { authorization: `Bearer ${daemon.adminToken}` } });
  assert.equal(authorized.status, 200);
  const body = (await authorized.json()) as { runtimes: Row[] };
  assert.ok(body.runtimes.length > 0);
});
