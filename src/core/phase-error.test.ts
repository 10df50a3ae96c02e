import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PlanError } from './errors.js';
import { describeFailure, PhaseError } from './phase-error.js';

const hide = (text: string) => text.replaceAll('s3cret', '***');

test('a phase error names its phase, with its hint; secrets are hidden in both', () => {
  const failure = describeFailure(new PhaseError('build', 'npm ci exited with code 1 (token s3cret).', 'Check s3cret.'), 'run', hide);
  assert.deepEqual(failure, {
    phase: 'build',
    message: 'npm ci exited with code 1 (token ***).',
    lines: ['==> [build] Build failed: npm ci exited with code 1 (token ***).', 'Hint: Check ***.'],
  });
});

test('any other error is blamed on the phase the deployment was in', () => {
  assert.deepEqual(describeFailure(new Error('socket closed'), 'healthcheck', hide).lines, [
    '==> [healthcheck] Health check failed: socket closed',
  ]);
  assert.deepEqual(describeFailure(new PlanError('No package.json.', 'Commit one.'), null, hide).lines, [
    '==> [build] Build failed: No package.json.',
    'Hint: Commit one.',
  ]);
});
