/**
 * The printed plan's start line shows the command the user wrote and where it came from; the
 * plan's data keeps the exact argv that runs it (the wrapper that sets npm's variables).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describePlan } from './describe-plan.js';
import { examplePath, exampleEnv, planFor } from '../../test/support/node-provider-fixtures.js';

const startLine = (lines: string[]) => lines.find((l) => l.startsWith('  Start: '));

test('scripts.start is printed as written, with its source; the data keeps the exact argv', async () => {
  const plan = await planFor(examplePath('node-hello'), {});
  assert.equal(startLine(describePlan(plan)), '  Start: node server.js  (scripts.start in package.json)');
  assert.equal(plan.start.argv[0], 'bash');
  assert.ok(plan.start.argv.includes('node server.js'), plan.start.argv.join(' '));
  assert.match(plan.start.argv[2]!, /npm_lifecycle_event=start/);
});

test("CC_RUN_COMMAND and a main file with poststart are printed in the user's words too", async () => {
  const custom = await planFor(examplePath('node-hello'), { CC_RUN_COMMAND: 'node server.js --port "$PORT"' });
  assert.equal(startLine(describePlan(custom)), '  Start: node server.js --port "$PORT"  (CC_RUN_COMMAND)');
  assert.deepEqual(custom.start.argv, ['bash', '-c', 'node server.js --port "$PORT"']);

  const main = await planFor(examplePath('node-main-without-start'), await exampleEnv('node-main-without-start'));
  assert.equal(
    startLine(describePlan(main)),
    '  Start: node server.js  (main in package.json, then scripts.poststart when it exits with status 0)',
  );
  assert.equal(main.start.argv[0], 'bash');
});
