import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, createApp, deploymentLog, getThroughRouter, newRelease, pushAndWait, registerSshKey } from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';

/** The autoscaler's settings an app has until it overrides them. */
const DEFAULT_AUTOSCALING = 'cpu-out=80,cpu-in=30,inflight-out=0,mem-out=90,mem-in=50,out-after=6s,in-after=1m,cooldown=10s,idle-after=15m';

let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let dir: string;
let appId: string;

const HOG_SERVER =
  "require('http').createServer((q,s)=>{if(q.url==='/hog'){const a=[];for(;;)a.push(Buffer.alloc(1<<20,1))}s.end('ok')}).listen(8080)";

before(async () => {
  daemon = await startDaemon();
  ({ gitEnv } = await registerSshKey(daemon));
  dir = checkoutExample('node-hello');
  appId = await createApp(daemon, dir, 'flavored');
});

after(async () => {
  await daemon?.stop();
});

test('scale shows the defaults and changes flavours; unknown names are refused with the list', async () => {
  const shown = JSON.parse((await daemon.cli(['scale', '--app', appId, '--format', 'json'])).stdout);
  assert.deepEqual(shown, {
    instances: 1,
    flavor: 'nano',
    memory_bytes: 512 * 1024 ** 2,
    build_flavor: 'S',
    build_memory_bytes: 2 * 1024 ** 3,
    disk_budget_bytes: 2 * 1024 ** 3,
    min_instances: 1,
    max_instances: 1,
    min_flavor: 'nano',
    max_flavor: 'nano',
    autoscaling: DEFAULT_AUTOSCALING,
    asleep_since: null,
    workers: null,
    decisions: [],
  });
  const set = await daemon.cli(['scale', '--app', appId, '--flavor', 'Pico', '--build-flavor', 'xs']);
  assert.equal(set.code, 0, set.stderr);
  assert.match(set.stdout, /flavor\s+pico \(256 MiB\)/);
  assert.match(set.stdout, /build flavor\s+XS \(1 GiB\)/);
  assert.match(set.stderr, /next deployment or `slipway restart`/);
  const bad = await daemon.cli(['scale', '--app', appId, '--flavor', 'huge']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /Unknown flavour "huge"/);
  assert.match(bad.stderr, /pico \(256 MiB\), nano \(512 MiB\), XS \(1 GiB\), S \(2 GiB\), M \(4 GiB\)/);
  const mismatch = await daemon.cli(['scale', '--app', appId, '--instances', '1', '--max-instances', '2']);
  assert.equal(mismatch.code, 1);
  assert.match(mismatch.stderr, /--instances sets a fixed count/);
  const status = await daemon.cli(['status', '--app', appId]);
  assert.match(status.stdout, /^flavor\s+pico \(256 MiB\)$/m);
  assert.match(status.stdout, /^build flavor\s+XS \(1 GiB\)$/m);
});

test('an instance over its flavour is killed in its own group, says so with the limit, and restarts', async () => {
  await daemon.cli(['env', 'set', 'CC_RUN_COMMAND', `node -e "${HOG_SERVER}"`, '--app', appId]);
  newRelease(dir, 'hog');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
  const log = await deploymentLog(daemon, appId, result.id);
  assert.ok(
    log.some((l) => l.includes('uid 2') && l.includes('pico')),
    'the instance runs as the app user with its flavour',
  );
  await getThroughRouter(daemon, `${appId}.localhost`, '/hog').catch(() => undefined);
  const lines = await waitUntil(
    'the out-of-memory kill and the restart',
    async () => {
      const l = (await daemon.cli(['logs', '--app', appId])).stdout.split('\n');
      return l.some((x) => x.includes('restarting in')) ? l : undefined;
    },
    60_000,
  );
  assert.ok(
    lines.some((l) => l.includes('crashed: was killed: out of memory: limit 256 MiB (flavour pico)')),
    lines.join('\n'),
  );
  await waitUntil(
    'the app to serve again',
    async () => ((await getThroughRouter(daemon, `${appId}.localhost`)).status === 200 ? true : undefined),
    30_000,
  );
});

test('a build over its flavour fails with the limit and the flavour to choose', async () => {
  await daemon.cli(['scale', '--app', appId, '--build-flavor', 'pico']);
  await daemon.cli(['env', 'set', 'CC_PRE_BUILD_HOOK', `node -e "const a=[];for(;;)a.push(Buffer.alloc(1<<20,1))"`, '--app', appId]);
  newRelease(dir, 'hog-build');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'FAIL');
  const log = await deploymentLog(daemon, appId, result.id);
  assert.ok(
    log.some((l) => l.includes('CC_PRE_BUILD_HOOK was killed: out of memory: limit 256 MiB (flavour pico)')),
    log.join('\n'),
  );
  assert.ok(log.some((l) => l.includes('slipway scale --build-flavor')));
  assert.equal((await getThroughRouter(daemon, `${appId}.localhost`)).status, 200, 'the previous release keeps serving');
  await daemon.cli(['env', 'rm', 'CC_PRE_BUILD_HOOK', '--app', appId]);
});

test('a storm of 5000 processes is stopped by the process limit while the daemon and other apps go on', async () => {
  const other = checkoutExample('node-hello');
  const otherId = await createApp(daemon, other, 'bystander');
  const stormScript =
    "const cp=require('child_process');let ok=0,refused=0;const kids=[];" +
    "for(let i=0;i<5000;i++){const c=cp.spawn('sleep',['20'],{stdio:'ignore'});c.on('error',()=>{});if(c.pid){ok++;kids.push(c)}else refused++}" +
    "console.log('started '+ok+' refused '+refused);for(const c of kids)c.kill('SIGKILL');setTimeout(()=>process.exit(0),500)";
  const storm = daemon.cli(['run', '--app', appId, '--', 'node', '-e', stormScript], { timeoutMs: 120_000 });
  newRelease(other, 'bystander');
  const deployed = await pushAndWait(daemon, other, otherId, gitEnv);
  assert.equal(deployed.state, 'OK', 'another app deploys during the storm');
  const r = await storm;
  const [, started, refused] = (/started (\d+) refused (\d+)/.exec(r.stdout) ?? []).map(Number);
  assert.ok(
    started! > 10 && started! < 256,
    `the storm was held under the pico limit of 256 tasks (${r.stdout.trim()} ${r.stderr.trim()})`,
  );
  assert.ok(refused! > 4000, 'most of the 5000 were refused');
  assert.equal(spawnSync('true').status, 0, 'the host still starts processes');
});
