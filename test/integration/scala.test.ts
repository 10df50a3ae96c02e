/**
 * Scala apps end to end through the product's own interfaces: a real daemon, `git push` over
 * SSH, the real sbt launcher building as the app user, instances in network namespaces, and
 * HTTP through the router.
 *
 * sbt builds are slow (30-100 s each on two cores, several minutes for an app's first build,
 * which fills its own caches), so two apps carry every case: scala-single (deploy, redeploy
 * under load with warm caches, crash restart, the failures that must keep it serving) and
 * scala-multi (without then with the target variables, then CC_RUN_COMMAND).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import {
  checkoutExample,
  commitAll,
  createApp,
  deploymentLog,
  getThroughRouter,
  gitPush,
  pushAndWait,
  registerSshKey,
  waitForDeploymentOf,
} from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';
import { listInstalledJdks } from '../../src/toolchains/sbt/jdks.js';
import { otherJdk, secondJdkMissing, skipOutsideCi } from '../support/suite-parts.js';

/** The major version of the JDK builds use when CC_JAVA_VERSION is not set. */
let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;

const single = { dir: '', id: '', host: '' };
const multi = { dir: '', id: '', host: '' };

const json = (body: string) => JSON.parse(body) as Record<string, unknown>;

async function setEnv(dir: string, vars: Record<string, string>): Promise<void> {
  for (const [name, value] of Object.entries(vars)) {
    const set = await daemon.cli(['env', 'set', name, value], { cwd: dir });
    assert.equal(set.code, 0, set.stderr);
  }
}

async function removeEnv(dir: string, names: string[]): Promise<void> {
  for (const name of names) {
    const removed = await daemon.cli(['env', 'rm', name], { cwd: dir });
    assert.equal(removed.code, 0, removed.stderr);
  }
}

/** Pushes HEAD and returns the deployment with its log as one text. */
async function deploy(app: { dir: string; id: string }) {
  const started = performance.now();
  const result = await pushAndWait(daemon, app.dir, app.id, gitEnv);
  const seconds = (performance.now() - started) / 1000;
  const log = await deploymentLog(daemon, app.id, result.id);
  return { ...result, seconds, log, text: log.join('\n') };
}

/** "Build succeeded in 52.3 s" of a deployment log, in seconds. */
function buildSeconds(log: string[]): number | undefined {
  const line = log.map((l) => /^Build succeeded in ([\d.]+) s$/.exec(l)).find(Boolean);
  return line ? Number(line[1]) : undefined;
}

function edit(dir: string, file: string, change: (text: string) => string): void {
  const path = join(dir, file);
  const before = readFileSync(path, 'utf8');
  const after = change(before);
  assert.notEqual(after, before, `${file} did not change`);
  writeFileSync(path, after);
}

/** Puts the files of an earlier commit back, as a new commit on top of the history. */
function restoreCommit(dir: string, commit: string, message: string): string {
  execFileSync('git', ['checkout', commit, '--', '.'], { cwd: dir });
  return commitAll(dir, message);
}

/** Every jar of an app's sbt caches with its modification time: a download would change it. */
function jarSnapshot(appId: string): Map<string, number> {
  const root = join(daemon.dataDir, 'apps', appId, 'cache', 'sbt');
  const jars = new Map<string, number>();
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    const relative = path.slice(root.length + 1);
    // sbt/tmp is emptied before each build: only the caches count.
    if (entry.isFile() && entry.name.endsWith('.jar') && !relative.startsWith('tmp/')) jars.set(relative, statSync(path).mtimeMs);
  }
  return jars;
}

/** The JVM serving an app: the java process whose working folder is one of the app's releases. */
function appJavaPids(appId: string): number[] {
  const releases = join(daemon.dataDir, 'apps', appId, 'releases') + '/';
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'java') continue;
      if (readlinkSync(`/proc/${entry}/cwd`).startsWith(releases)) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

before(async () => {
  daemon = await startDaemon();
  ({ gitEnv } = await registerSshKey(daemon));
  single.dir = checkoutExample('scala-single');
  single.id = await createApp(daemon, single.dir, 'scala-single', { GREETING: 'bonjour from slipway' }, 'sbt');
  single.host = `${single.id}.localhost`;
  multi.dir = checkoutExample('scala-multi');
  multi.id = await createApp(daemon, multi.dir, 'scala-multi', { GREETING: 'multi' }, 'sbt');
  multi.host = `${multi.id}.localhost`;
});

after(async () => {
  await daemon?.stop();
});

let firstBuild: { seconds: number; build?: number; log: string[] };

test('scala-single: create --type sbt, git push, sbt stage; the app sees its variable, HOCON and http.port', async (t) => {
  const result = await deploy(single);
  assert.equal(result.state, 'OK', result.text);
  firstBuild = { seconds: result.seconds, build: buildSeconds(result.log), log: result.log };
  t.diagnostic(`first build of scala-single (empty app cache): push to OK ${result.seconds.toFixed(1)} s, build ${firstBuild.build} s`);

  const response = await getThroughRouter(daemon, single.host);
  assert.equal(response.status, 200, response.body);
  assert.deepEqual(json(response.body), {
    app: 'scala-single',
    greetingEnv: 'bonjour from slipway',
    greetingHocon: 'bonjour from slipway',
    httpPort: '8080',
  });

  const text = result.text;
  assert.match(text, /Build plan \(sbt\)/);
  assert.match(text, /^\s+sbt 1\.13\.0 /m, 'the sbt version of project/build.properties');
  assert.match(text, /^\s+java \d+ /m, 'the JDK');
  assert.match(text, /Java \d+ \([^)]*\): the machine's default java/);
  assert.match(text, /goal: stage \(default stage task\)/);
  assert.match(text, /==> \[build\] sbt stage: /);
  assert.match(text, /-Dsbt\.boot\.directory=\S+\/apps\/app_[^/\s]+\/cache\/sbt\/boot/, "sbt's caches are in the app's cache folder");
  assert.ok(result.log.includes('Response from GET / is 200'), text);
  assert.match(text, /target\/universal\/stage\/bin\/scala-single -Dhttp\.port=8080/);

  // The JVM sizes its heap from the instance's flavour (nano, 512 MiB: a quarter), not from the machine.
  const heap = await waitUntil(
    'the app to print its heap',
    async () =>
      /scala-single: listening on 0\.0\.0\.0:8080, max heap (\d+) MiB/.exec((await daemon.cli(['logs', '--app', single.id])).stdout)?.[1],
    30_000,
  );
  assert.ok(Number(heap) > 100 && Number(heap) <= 128, `max heap ${heap} MiB`);
});

test('scala-single: a redeploy under load fails no request, switches, and reuses the persisted sbt caches', async (t) => {
  edit(single.dir, 'src/main/scala/example/Main.scala', (s) => s.replace('{"app":"scala-single",', '{"app":"scala-single v2",'));
  const commit = commitAll(single.dir, 'v2');
  let running = true;
  let ok = 0;
  const failures: string[] = [];
  const seen = new Set<string>();
  const loop = async () => {
    while (running) {
      try {
        const r = await getThroughRouter(daemon, single.host);
        if (r.status === 200) {
          ok++;
          seen.add(String(json(r.body).app));
        } else failures.push(`status ${r.status}`);
      } catch (error) {
        failures.push((error as Error).message);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const jarsBefore = jarSnapshot(single.id);
  const clients = [loop(), loop()];
  const started = performance.now();
  const push = await gitPush(single.dir, `git+ssh://git@127.0.0.1:${daemon.sshPort}/${single.id}.git`, gitEnv);
  assert.equal(push.code, 0, push.output);
  const deployment = await waitForDeploymentOf(daemon, single.id, commit);
  const seconds = (performance.now() - started) / 1000;
  await new Promise((r) => setTimeout(r, 2000));
  running = false;
  await Promise.all(clients);
  const log = await deploymentLog(daemon, single.id, deployment.id);
  assert.equal(deployment.state, 'OK', log.join('\n'));
  assert.deepEqual(failures, []);
  assert.ok(ok > 20, `only ${ok} requests went through`);
  assert.deepEqual([...seen].sort(), ['scala-single', 'scala-single v2']);
  assert.equal(json((await getThroughRouter(daemon, single.host)).body).app, 'scala-single v2');

  // The second build finds sbt, Scala and every dependency in the app's cache: the launcher
  // fetches nothing and no jar of the cache is downloaded again, whatever the timing.
  assert.ok(
    firstBuild.log.some((l) => l.includes('[launcher] getting org.scala-sbt sbt 1.13.0')),
    'the first build fetched sbt',
  );
  assert.ok(firstBuild.log.includes('No build cache for this toolchain: performing a full build.'));
  assert.deepEqual(
    log.filter((l) => l.includes('[launcher] getting')),
    [],
    'the second build fetched no sbt or Scala',
  );
  assert.ok(log.includes('A build cache exists for this toolchain: reusing it.'), log.join('\n'));
  assert.ok(jarsBefore.size > 50, `the app's coursier cache held ${jarsBefore.size} jars after the first build`);
  assert.deepEqual(jarSnapshot(single.id), jarsBefore, 'no jar was downloaded again or added');
  const second = buildSeconds(log);
  t.diagnostic(
    `redeploy of scala-single with warm sbt caches: push to OK ${seconds.toFixed(1)} s, build ${second} s ` +
      `(first: ${firstBuild.seconds.toFixed(1)} s, build ${firstBuild.build} s; ratio ${(seconds / firstBuild.seconds).toFixed(2)})`,
  );
});

/** The numbers of sources sbt compiled, from its "compiling N Scala sources" lines. */
function compiledSources(log: string[]): number[] {
  return log
    .map((l) => /compiling (\d+) Scala sources?/.exec(l))
    .filter((m) => m !== null)
    .map((m) => Number(m[1]));
}

test("scala-single: a commit that changes no source compiles nothing: sbt's incremental state is kept between builds", async (t) => {
  edit(single.dir, 'README.md', (s) => `${s}\nA line that is not code.\n`);
  commitAll(single.dir, 'docs only');
  const result = await deploy(single);
  assert.equal(result.state, 'OK', result.text);
  assert.ok(result.log.includes('A build cache exists for this toolchain: reusing it.'), result.text);
  assert.match(result.text, /sbt's incremental state is kept between builds: target, project\/target, project\/project/);
  assert.deepEqual(compiledSources(result.log), [], `sbt compiled again:\n${result.text}`);
  // sbt names projects after their folder and its task caches hold paths: each build of the app
  // runs in the app's one build folder, where the previous build's state is valid.
  const buildFolder = join(daemon.dataDir, 'apps', single.id, 'build');
  assert.ok(result.log.includes(`[info] loading project definition from ${buildFolder}/project`), result.text);
  assert.equal(json((await getThroughRouter(daemon, single.host)).body).app, 'scala-single v2');
  t.diagnostic(`redeploy with no source changed: build ${buildSeconds(result.log)} s`);
});

test("scala-single: another JDK discards sbt's kept state and compiles everything again", async (t) => {
  const jdks = await listInstalledJdks();
  const other = otherJdk(jdks);
  if (!other) {
    skipOutsideCi(t, secondJdkMissing(jdks)!);
    return;
  }
  await setEnv(single.dir, { CC_JAVA_VERSION: String(other.major) });
  try {
    edit(single.dir, 'README.md', (s) => `${s}\nBuilt with Java ${other.major}.\n`);
    commitAll(single.dir, `java ${other.major}`);
    const result = await deploy(single);
    assert.equal(result.state, 'OK', result.text);
    assert.ok(result.log.includes('No build cache for this toolchain: performing a full build.'), result.text);
    assert.deepEqual(compiledSources(result.log), [1], 'Main.scala compiled again');
  } finally {
    await removeEnv(single.dir, ['CC_JAVA_VERSION']);
  }
});

test('scala-single: a crashed JVM is restarted automatically and the restart is logged', async () => {
  // The release the previous test replaced drains and stops after its deployment is OK: wait
  // until only the serving JVM is left.
  const [pid, ...others] = await waitUntil(
    'one JVM to serve the app',
    async () => (appJavaPids(single.id).length === 1 ? appJavaPids(single.id) : undefined),
    60_000,
  );
  assert.ok(pid, 'the serving JVM was found');
  assert.deepEqual(others, [], 'one JVM serves the app');
  process.kill(pid, 'SIGKILL');
  const response = await waitUntil(
    'the app to answer from a new JVM',
    async () => {
      const r = await getThroughRouter(daemon, single.host);
      return r.status === 200 && appJavaPids(single.id).some((p) => p !== pid) ? r : undefined;
    },
    120_000,
  );
  assert.equal(json(response.body).app, 'scala-single v2');
  const logs = await daemon.cli(['logs', '--app', single.id]);
  assert.match(logs.stdout, /restart/i);
  assert.match(logs.stdout, /scala-single: listening on 0\.0\.0\.0:8080/, "the app's own output is in its logs");
  assert.match(logs.stdout, /scala-single: stopping/, 'the release replaced by the redeploy got SIGTERM and ran its shutdown hook');
  const status = JSON.parse((await daemon.cli(['status', '--app', single.id, '--format', 'json'])).stdout);
  assert.ok(status.instance.restarts >= 1, JSON.stringify(status));
});

test('scala-single: without sbt-native-packager the deploy fails with what to add, and the previous release keeps serving', async () => {
  const good = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: single.dir, encoding: 'utf8' }).trim();
  edit(single.dir, 'project/plugins.sbt', (s) => s.replace(/^addSbtPlugin.*sbt-native-packager.*$/m, ''));
  edit(single.dir, 'build.sbt', (s) => s.replace(/^enablePlugins\(JavaAppPackaging\)$/m, ''));
  commitAll(single.dir, 'no packager');
  const result = await deploy(single);
  assert.equal(result.state, 'FAIL', result.text);
  assert.match(result.text, /Not a valid (command|key): stage/, "sbt's own words");
  assert.match(result.text, /Add sbt-native-packager to project\/plugins\.sbt/);
  assert.match(result.text, /addSbtPlugin\("com\.github\.sbt" % "sbt-native-packager"/);
  assert.match(result.text, /enablePlugins\(JavaAppPackaging\)/);
  assert.ok(result.log.includes('The previous release keeps serving.'), result.text);
  const response = await getThroughRouter(daemon, single.host);
  assert.equal(response.status, 200);
  assert.equal(json(response.body).app, 'scala-single v2');
  restoreCommit(single.dir, good, 'packager back');
});

test("scala-single: a compile error fails the deploy with sbt's own message", async () => {
  edit(single.dir, 'src/main/scala/example/Main.scala', (s) => s.replace('server.start()', 'server.startNow()'));
  commitAll(single.dir, 'does not compile');
  const result = await deploy(single);
  assert.equal(result.state, 'FAIL', result.text);
  assert.match(result.text, /\[error\] .*Main\.scala:\d+:\d+: value startNow is not a member of com\.sun\.net\.httpserver\.HttpServer/);
  assert.match(
    result.text,
    /The code does not compile; fix these errors and push again:\n\s+.*Main\.scala:\d+:\d+: value startNow is not a member/,
  );
  assert.ok(result.log.includes('The previous release keeps serving.'), result.text);
  assert.equal(json((await getThroughRouter(daemon, single.host)).body).app, 'scala-single v2');
  edit(single.dir, 'src/main/scala/example/Main.scala', (s) => s.replace('server.startNow()', 'server.start()'));
  commitAll(single.dir, 'compiles again');
});

test('scala-single: CC_SBT_TARGET_DIR leaving the build folder is refused before sbt runs', async () => {
  await setEnv(single.dir, { CC_SBT_TARGET_DIR: '../x' });
  const result = await deploy(single);
  await removeEnv(single.dir, ['CC_SBT_TARGET_DIR']);
  assert.equal(result.state, 'FAIL', result.text);
  assert.match(result.text, /CC_SBT_TARGET_DIR/);
  assert.match(result.text, /\.\./);
  assert.doesNotMatch(result.text, /==> \[build\] sbt /, 'sbt never ran');
  assert.equal(json((await getThroughRouter(daemon, single.host)).body).app, 'scala-single v2');
});

test('scala-multi: without the target variables nothing is staged at the root, and the error names them', async () => {
  const result = await deploy(multi);
  assert.equal(result.state, 'FAIL', result.text);
  assert.match(result.text, /No binary to start: target\/universal\/stage\/bin\//);
  assert.match(result.text, /web\/target\/universal\/stage\/bin\/web/);
  assert.match(result.text, /CC_SBT_TARGET_DIR=web/);
  assert.match(result.text, /CC_SBT_TARGET_BIN=web/);
  assert.equal((await getThroughRouter(daemon, multi.host)).status, 503);
});

test('scala-multi: SBT_DEPLOY_GOAL, CC_SBT_TARGET_DIR and CC_SBT_TARGET_BIN deploy the web module', async () => {
  await setEnv(multi.dir, { SBT_DEPLOY_GOAL: 'web/stage', CC_SBT_TARGET_DIR: 'web', CC_SBT_TARGET_BIN: 'web' });
  commitAll(multi.dir, 'with target variables');
  const result = await deploy(multi);
  assert.equal(result.state, 'OK', result.text);
  assert.match(result.text, /goal: web\/stage \(SBT_DEPLOY_GOAL\)/);
  assert.match(result.text, /==> \[build\] sbt web\/stage: /);
  assert.match(result.text, /web\/target\/universal\/stage\/bin\/web -Dhttp\.port=8080/);
  const response = await getThroughRouter(daemon, multi.host);
  assert.equal(response.status, 200, response.body);
  assert.deepEqual(json(response.body), {
    app: 'scala-multi',
    module: 'web',
    greeting: 'hello from the core module, multi',
    httpPort: '8080',
  });
});

test('scala-multi: CC_RUN_COMMAND starts the app its own way (the target variables still checked)', async () => {
  await setEnv(multi.dir, { CC_RUN_COMMAND: 'export GREETING=run-command; exec ./web/target/universal/stage/bin/web -Dhttp.port=8080' });
  commitAll(multi.dir, 'custom run command');
  const result = await deploy(multi);
  assert.equal(result.state, 'OK', result.text);
  assert.match(result.text, /Starting: sh -c export GREETING=run-command; exec/);
  const response = await getThroughRouter(daemon, multi.host);
  assert.equal(response.status, 200, response.body);
  assert.equal(json(response.body).greeting, 'hello from the core module, run-command');
});
