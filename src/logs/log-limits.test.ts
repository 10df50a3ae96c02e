import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_LOG_LIMITS, logCapBytes, parseLogLimits, parseSize } from './log-limits.js';

const MiB = 1024 * 1024;

test('defaults: 10 MiB and 3 rotated files per app, 2 MiB and 1 per deployment, 20 deployment logs', () => {
  assert.deepEqual(parseLogLimits({}, {}), DEFAULT_LOG_LIMITS);
  assert.equal(logCapBytes(DEFAULT_LOG_LIMITS.app), 40 * MiB);
  assert.equal(logCapBytes(DEFAULT_LOG_LIMITS.deployment), 4 * MiB);
});

test('sizes take K, M, G (binary) or bytes', () => {
  assert.equal(parseSize('--x', '10M'), 10 * MiB);
  assert.equal(parseSize('--x', '2048k'), 2 * MiB);
  assert.equal(parseSize('--x', '1GiB'), 1024 * MiB);
  assert.equal(parseSize('--x', String(3 * MiB)), 3 * MiB);
});

test('sizes below 1M, above 64G or not sizes are refused with the flag and the forms it takes', () => {
  for (const bad of ['512K', '100G', 'ten', '-1M', '1.5M', '']) {
    assert.throws(() => parseSize('--log-max-size', bad), /--log-max-size must be a size from 1M to 64G such as 10M/);
  }
});

test('flags win over environment variables, which win over defaults', () => {
  const limits = parseLogLimits(
    { 'log-max-size': '5M', 'deploy-logs-kept': '3' },
    { SLIPWAY_LOG_MAX_SIZE: '7M', SLIPWAY_LOG_FILES: '0', SLIPWAY_DEPLOY_LOG_MAX_SIZE: '1M', SLIPWAY_DEPLOY_LOG_FILES: '2' },
  );
  assert.deepEqual(limits, {
    app: { maxFileBytes: 5 * MiB, rotatedFiles: 0 },
    deployment: { maxFileBytes: 1 * MiB, rotatedFiles: 2 },
    deploymentLogsPerApp: 3,
  });
});

test('counts out of range are refused with the range', () => {
  assert.throws(() => parseLogLimits({ 'log-files': '51' }, {}), /--log-files must be a whole number from 0 to 50, not "51"/);
  assert.throws(() => parseLogLimits({}, { SLIPWAY_DEPLOY_LOGS_KEPT: '0' }), /--deploy-logs-kept must be a whole number from 1 to 1000/);
});
