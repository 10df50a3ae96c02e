import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeRunHooks, hookCommand, withBuildHooks } from './hooks.js';
import type { BuildPlan } from '../providers/plan.js';

const plan = { build: [{ label: 'install', argv: ['npm', 'ci'] }] } as unknown as BuildPlan;

test('build hooks wrap the build steps: pre first, post last, run by bash', () => {
  const hooked = withBuildHooks(plan, { CC_PRE_BUILD_HOOK: 'echo pre', CC_POST_BUILD_HOOK: 'npm run build' });
  assert.deepEqual(hooked.build, [
    { label: 'CC_PRE_BUILD_HOOK', argv: ['bash', '-c', 'echo pre'] },
    { label: 'install', argv: ['npm', 'ci'] },
    { label: 'CC_POST_BUILD_HOOK', argv: ['bash', '-c', 'npm run build'] },
  ]);
  assert.deepEqual(withBuildHooks(plan, {}).build, plan.build);
});

test('an empty hook is no hook; run hooks are described for the printed plan', () => {
  assert.equal(hookCommand('CC_PRE_RUN_HOOK', { CC_PRE_RUN_HOOK: '  ' }), undefined);
  assert.deepEqual(describeRunHooks({ CC_PRE_RUN_HOOK: 'node migrate.js', CC_RUN_FAILED_HOOK: 'echo failed' }), [
    'CC_PRE_RUN_HOOK: bash -c "node migrate.js"',
    'CC_RUN_FAILED_HOOK: bash -c "echo failed"',
  ]);
});
