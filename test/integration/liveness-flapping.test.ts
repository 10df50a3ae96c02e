/**
 * docs/security.md, Liveness cannot be turned into load: a hostile app (test/fixtures/hostile/
 * flapping) passes its health check, then fails every liveness check, and answers every check
 * with a body that never ends. Its deployment still passes (the body is read up to a bound),
 * and its instance is replaced with a back-off (5 s, 10 s, 20 s… between replacements), which
 * the app's activity states, rather than every second or so as its checks fail.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutFixture, createApp, deploymentLog, pushAndWait, registerSshKey } from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';

let daemon: TestDaemon;
let appId: string;

interface Activity {
  id: string;
  cause: string;
  state: string;
  message: string | null;
  created_at: string;
}

async function replacements(): Promise<Activity[]> {
  const shown = await daemon.cli(['activity', '--app', appId, '--limit', '100', '--format', 'json']);
  assert.equal(shown.code, 0, shown.stderr);
  return (JSON.parse(shown.stdout) as Activity[]).filter((d) => d.cause === 'instance 0 stopped answering' && d.state === 'OK').reverse();
}

before(async () => {
  daemon = await startDaemon();
  const { gitEnv } = await registerSshKey(daemon);
  const dir = checkoutFixture('hostile/flapping');
  // Checks as often and as strict as the settings allow: without a back-off, a replacement would follow each failure.
  appId = await createApp(daemon, dir, 'flapping', {
    SLIPWAY_LIVENESS_INTERVAL: '0.5',
    SLIPWAY_LIVENESS_TIMEOUT: '0.5',
    SLIPWAY_LIVENESS_FAILURES: '1',
  });
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
});

after(async () => {
  await daemon?.stop();
});

test('a flapping instance is replaced a few times a minute at most, and the activity says when next', async () => {
  const [first] = await waitUntil(
    'the first replacement',
    async () => ((await replacements()).length > 0 ? replacements() : undefined),
    60_000,
  );
  assert.match(
    first!.message!,
    /^Instance 0 replaced after failing its liveness check \(answered GET \/ with 503 for \d+ s\); next replacement not before 5 s$/,
  );
  // 35 s after the first: the next ones wait 5 s, then 10 s, then 20 s (plus each one's boot).
  // The window starts at the first replacement's own time, not when this test saw it (a loaded
  // machine answers the CLI late).
  const firstAt = Date.parse(first!.created_at);
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, firstAt + 36_000 - Date.now())));
  const all = await replacements();
  const within = all.filter((d) => Date.parse(d.created_at) <= firstAt + 35_000);
  assert.ok(within.length >= 2, `positive control: it flaps (${within.length} replacements)\n${JSON.stringify(all, null, 1)}`);
  assert.ok(within.length <= 4, `at most 4 replacements in 35 s, not ${within.length}\n${JSON.stringify(all, null, 1)}`);
  assert.deepEqual(
    all.slice(0, 3).map((d) => /next replacement not before (\d+) s$/.exec(d.message ?? '')?.[1]),
    ['5', '10', '20'].slice(0, Math.min(3, all.length)),
    JSON.stringify(all, null, 1),
  );
  // The daemon answers as usual meanwhile: the checks' endless bodies cost it nothing.
  const status = await daemon.cli(['status', '--app', appId]);
  assert.equal(status.code, 0, status.stderr);
});
