import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkCronTimeoutVariable, cronTimeoutMs } from './cron-timeout.js';

test('SLIPWAY_CRON_TIMEOUT: whole seconds from 1 to 86400, an hour unless set', () => {
  assert.deepEqual(cronTimeoutMs({}), { ms: 3_600_000 });
  assert.deepEqual(cronTimeoutMs({ SLIPWAY_CRON_TIMEOUT: ' 90 ' }), { ms: 90_000 });
  for (const bad of ['0', '1.5', '86401', 'ten']) {
    const { ms, problem } = cronTimeoutMs({ SLIPWAY_CRON_TIMEOUT: bad });
    assert.equal(ms, 3_600_000, bad);
    assert.match(problem ?? '', /the default 3600 s applies/, bad);
    assert.throws(() => checkCronTimeoutVariable('SLIPWAY_CRON_TIMEOUT', bad), /nothing was changed/);
  }
  checkCronTimeoutVariable('SLIPWAY_CRON_TIMEOUT', '600');
  checkCronTimeoutVariable('OTHER', 'ten');
});
