import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { entrypointEvent, identityFile, taskEntrypoint } from './task-entrypoint.js';

const MARKER = 'slipway-0123456789abcdef';
const NODE_ENV_KEYS = "console.log(JSON.stringify(Object.keys(process.env).sort().map((k) => k + '=' + process.env[k])))";

/** Runs the entrypoint with dash, as a task does, its slot's identity file in place. */
function run(beforeStart: string[][], command: string[], env: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-entrypoint-'));
  try {
    writeFileSync(join(dir, '2'), identityFile(env));
    const shared = Object.fromEntries(Object.entries(env).filter(([k]) => k !== 'INSTANCE_ID' && k !== 'INSTANCE_NUMBER'));
    const [sh, ...args] = taskEntrypoint({ marker: MARKER, beforeStart, command, env, identityDir: dir });
    const r = spawnSync(sh!, args, { env: { ...shared, SLIPWAY_SLOT: '2', HOSTNAME: 'task' }, encoding: 'utf8' });
    // Beside the identity: whether the task started the app (what an adopting daemon reads).
    return { ...r, startedFile: existsSync(join(dir, '2.started')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the app gets its slot identity and exactly its environment, odd values intact, after the before-start commands', () => {
  const env = { PATH: '/usr/bin:/bin', INSTANCE_ID: "inst-'1'", INSTANCE_NUMBER: '1', ODD: 'a=b; $(echo no) "q" \'s\'' };
  const r = run(
    [
      ['/bin/echo', 'hook one'],
      ['/bin/sh', '-c', 'echo "hook two $INSTANCE_ID"'],
    ],
    ['/usr/bin/node', '-e', NODE_ENV_KEYS],
    env,
  );
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.deepEqual(lines.slice(0, 5), [
    `${MARKER} before-start 0`,
    'hook one',
    `${MARKER} before-start 1`,
    "hook two inst-'1'",
    `${MARKER} started`,
  ]);
  assert.equal(r.startedFile, true);
  assert.deepEqual(
    JSON.parse(lines[5]!),
    Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .sort(),
  );
});

test('a failing before-start command stops the task with its exit code, the app never runs', () => {
  const r = run(
    [
      ['/bin/sh', '-c', 'echo broke >&2; exit 4'],
      ['/bin/echo', 'never'],
    ],
    ['/bin/echo', 'app ran'],
    { PATH: '/usr/bin:/bin' },
  );
  assert.equal(r.status, 4);
  assert.equal(r.stdout, `${MARKER} before-start 0\n${MARKER} before-start-failed 0 4\n`);
  assert.equal(r.stderr, 'broke\n');
  assert.equal(r.startedFile, false, 'no started file for an app that never ran');
});

test('marker lines are told apart from the app lines', () => {
  assert.deepEqual(entrypointEvent(MARKER, `${MARKER} started`), { kind: 'started' });
  assert.deepEqual(entrypointEvent(MARKER, `${MARKER} before-start 2`), { kind: 'before-start', index: 2 });
  assert.deepEqual(entrypointEvent(MARKER, `${MARKER} before-start-failed 1 127`), { kind: 'before-start-failed', index: 1, code: 127 });
  assert.equal(entrypointEvent(MARKER, 'started'), undefined);
  assert.equal(entrypointEvent(MARKER, `${MARKER}x started`), undefined);
});
