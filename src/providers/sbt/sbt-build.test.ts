/**
 * Real builds: the plan's own argv run with the real sbt launcher fetched by Maven, on copies of
 * the examples, then the staged script started in a network namespace of its own (so it can
 * listen on 8080 like in production) and asked over HTTP.
 *
 * Caches live in SLIPWAY_SBT_TEST_CACHE (default /tmp/slipway-test-sbt-cache) and are reused
 * between runs: only the first run on a machine pays sbt's downloads.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PlanError, type BuildPlan, type PlanCommand } from '../plan.js';
import { explainSbtFailure } from './explain-failure.js';
import { hasPlaceholder } from './placeholders.js';
import { prepareSbtPlan, previewSbtPlan } from './prepare.js';
import { resolveSbtBinary } from './resolve-binary.js';
import { sbtProvider } from './sbt-provider.js';

const here = dirname(fileURLToPath(import.meta.url));
const examples = resolve(here, '../../../examples');
const cacheRoot = process.env.SLIPWAY_SBT_TEST_CACHE ?? '/tmp/slipway-test-sbt-cache';
const toolchainCacheDir = join(cacheRoot, 'toolchains');
/** One app cache for all builds here: they stand for redeploys of one app. */
const appCacheDir = join(cacheRoot, 'app');
const BUILD_TIMEOUT_MS = 20 * 60_000;

interface BuildRun {
  code: number | null;
  lines: string[];
  seconds: number;
}

/** Runs one plan command as the pipeline does: argv, no shell, stdin closed, output by line. */
function runCommand(command: PlanCommand, buildDir: string, env: Record<string, string>): Promise<BuildRun> {
  const started = Date.now();
  return new Promise((resolvePromise, reject) => {
    const [file, ...args] = command.argv;
    const child = spawn(file!, args, {
      cwd: command.cwd ? join(buildDir, command.cwd) : buildDir,
      env: { ...process.env, ...env, ...command.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let text = '';
    child.stdout.on('data', (chunk) => (text += chunk));
    child.stderr.on('data', (chunk) => (text += chunk));
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), BUILD_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, lines: text.split('\n'), seconds: (Date.now() - started) / 1000 });
    });
  });
}

async function buildWithPlan(plan: BuildPlan, buildDir: string, env: Record<string, string>): Promise<BuildRun> {
  const prepared = await prepareSbtPlan(plan, { toolchainCacheDir, appCacheDir, log: (line) => console.log(`  ${line}`) });
  // `slipway plan` fetches nothing, yet shows the paths this build runs with.
  assert.deepEqual(await previewSbtPlan(plan, { toolchainCacheDir, appCacheDir }), prepared, 'the previewed plan is the prepared one');
  const runs: BuildRun[] = [];
  for (const command of prepared.build) {
    assert.equal(hasPlaceholder(command.argv), false, `no token left in ${command.argv.join(' ')}`);
    const run = await runCommand(command, buildDir, { ...env, ...prepared.env });
    runs.push(run);
    if (run.code !== 0) break;
  }
  return { code: runs.at(-1)!.code, lines: runs.flatMap((r) => r.lines), seconds: runs.reduce((s, r) => s + r.seconds, 0) };
}

interface RunningApp {
  pid: number;
  output: () => string;
  stop: () => Promise<void>;
}

/** Starts the app in a new network namespace with only `lo`, as the instance backend isolates apps. */
function startIsolated(argv: string[], cwd: string, env: Record<string, string>): RunningApp {
  const child = spawn('unshare', ['--net', '--', 'sh', '-c', 'ip link set lo up && exec "$@"', 'sh', ...argv], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let text = '';
  child.stdout.on('data', (chunk) => (text += chunk));
  child.stderr.on('data', (chunk) => (text += chunk));
  const exited = new Promise<void>((r) => child.on('close', () => r()));
  return {
    pid: child.pid!,
    output: () => text,
    stop: async () => {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        return;
      }
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
      }, 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

const FETCH_SCRIPT = `fetch(process.argv[1]).then(async (r) => { console.log(r.status); console.log(await r.text()); }, (e) => { console.log('ERR ' + e.cause?.code); process.exit(2); })`;

/** GET inside the app's namespace, retrying while the JVM starts (bounded: 90 tries, ~1 per second). */
async function getInside(app: RunningApp, path: string): Promise<{ status: number; body: string }> {
  let last = '';
  for (let attempt = 0; attempt < 90; attempt++) {
    const run = await runCommand(
      {
        label: 'probe',
        argv: ['nsenter', `--net=/proc/${app.pid}/ns/net`, '--', process.execPath, '-e', FETCH_SCRIPT, `http://127.0.0.1:8080${path}`],
      },
      tmpdir(),
      {},
    );
    if (run.code === 0) {
      const [status, ...body] = run.lines;
      return { status: Number(status), body: body.join('\n').trim() };
    }
    last = run.lines.join('\n');
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`the app never answered on 8080 (last probe: ${last}); its output:\n${app.output()}`);
}

let scratch: string;
before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'slipway-sbt-build-'));
  await mkdir(cacheRoot, { recursive: true });
});
after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

function context(sourceDir: string, env: Record<string, string>) {
  return { sourceDir, appType: 'sbt', env, catalog: { versions: async () => [] } };
}

describe('sbt builds with the real launcher', { timeout: 45 * 60_000 }, () => {
  it('scala-single: stage, start the first staged script, answer with env, HOCON and http.port', async () => {
    const buildDir = join(scratch, 'single');
    await cp(join(examples, 'scala-single'), buildDir, { recursive: true });
    const env = { GREETING: 'hello from the environment' };
    const plan = await sbtProvider.plan(context(buildDir, env));
    assert.deepEqual(plan.warnings, []);

    const build = await buildWithPlan(plan, buildDir, { ...env, ...plan.env });
    console.log(`  scala-single: sbt stage took ${build.seconds.toFixed(1)} s`);
    assert.equal(build.code, 0, `sbt stage failed:\n${build.lines.slice(-40).join('\n')}`);
    assert.ok(build.lines.some((l) => l.startsWith('[success]')));

    const argv = await resolveSbtBinary(buildDir, env);
    assert.deepEqual(argv, ['./target/universal/stage/bin/scala-single', '-Dhttp.port=8080']);

    const app = startIsolated(argv, buildDir, { ...env, ...plan.env });
    try {
      const response = await getInside(app, '/');
      assert.equal(response.status, 200);
      assert.deepEqual(JSON.parse(response.body), {
        app: 'scala-single',
        greetingEnv: 'hello from the environment',
        greetingHocon: 'hello from the environment',
        httpPort: '8080',
      });
    } finally {
      await app.stop();
    }
  });

  it('scala-multi: SBT_DEPLOY_GOAL=web/stage with CC_SBT_TARGET_DIR/BIN starts web; without them the error names them', async () => {
    const buildDir = join(scratch, 'multi');
    await cp(join(examples, 'scala-multi'), buildDir, { recursive: true });
    const env = { SBT_DEPLOY_GOAL: 'web/stage', CC_SBT_TARGET_DIR: 'web', CC_SBT_TARGET_BIN: 'web', GREETING: 'multi' };
    const plan = await sbtProvider.plan(context(buildDir, env));
    const build = await buildWithPlan(plan, buildDir, { ...env, ...plan.env });
    console.log(`  scala-multi: sbt web/stage took ${build.seconds.toFixed(1)} s`);
    assert.equal(build.code, 0, `sbt web/stage failed:\n${build.lines.slice(-40).join('\n')}`);

    const missing = await resolveSbtBinary(buildDir, {}).then(
      () => assert.fail('nothing is staged at the root'),
      (e: unknown) => e,
    );
    assert.ok(missing instanceof PlanError);
    assert.match(missing.message, /web\/target\/universal\/stage\/bin\/web/);
    assert.match(missing.hint ?? '', /CC_SBT_TARGET_DIR=web and CC_SBT_TARGET_BIN=web/);

    const argv = await resolveSbtBinary(buildDir, env);
    assert.deepEqual(argv, ['./web/target/universal/stage/bin/web', '-Dhttp.port=8080']);
    const app = startIsolated(argv, buildDir, { ...env, ...plan.env });
    try {
      const response = await getInside(app, '/');
      assert.equal(response.status, 200);
      assert.deepEqual(JSON.parse(response.body), {
        app: 'scala-multi',
        module: 'web',
        greeting: 'hello from the core module, multi',
        httpPort: '8080',
      });
    } finally {
      await app.stop();
    }
  });

  it('a project without sbt-native-packager fails, and the explanation says what to add', async () => {
    const buildDir = join(scratch, 'no-packager');
    await mkdir(join(buildDir, 'project'), { recursive: true });
    await mkdir(join(buildDir, 'src/main/scala'), { recursive: true });
    await cp(join(examples, 'scala-single/project/build.properties'), join(buildDir, 'project/build.properties'));
    await writeFile(join(buildDir, 'build.sbt'), 'name := "no-packager"\nscalaVersion := "2.13.18"\n');
    await writeFile(join(buildDir, 'src/main/scala/Main.scala'), 'object Main extends App { println("hi") }\n');

    const plan = await sbtProvider.plan(context(buildDir, {}));
    assert.match(plan.warnings.join('\n'), /sbt-native-packager/);
    const build = await buildWithPlan(plan, buildDir, plan.env);
    console.log(`  no-packager: failing sbt stage took ${build.seconds.toFixed(1)} s`);
    assert.notEqual(build.code, 0);
    const advice = explainSbtFailure(build.lines);
    assert.ok(advice, `an explanation for:\n${build.lines.slice(-20).join('\n')}`);
    assert.match(advice, /sbt has no `stage` task/);
    assert.match(advice, /addSbtPlugin\("com\.github\.sbt" % "sbt-native-packager"/);
    assert.match(advice, /enablePlugins\(JavaAppPackaging\)/);
  });
});
