/**
 * Every Node.js/Bun example deployed through the product's real interfaces: one real daemon,
 * `slipway create` / `env set`, `git push` over SSH, the real package managers fetched into the
 * shared toolchain cache, instances in their own network namespaces, and GET / through the
 * router. Each app reports what it runs on (examples/node-* /server.*); the expectations come
 * from the examples' example.json files, so the examples and this test cannot drift apart.
 *
 * Deployments run one after the other on the one daemon (2-core machines): a few minutes with
 * a warm toolchain cache (SLIPWAY_TOOLCHAIN_CACHE, shared between runs).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import {
  EXAMPLES,
  checkoutExample,
  commitAll,
  createApp,
  getThroughRouter,
  newRelease,
  pushAndWait,
  registerSshKey,
} from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';

type Facts = Record<string, unknown>;

interface ExampleMeta {
  env?: Record<string, string>;
  expect?: Facts;
  variants?: Array<{ env: Record<string, string>; expect: Facts }>;
  expectLog?: string;
}

interface Deployed {
  dir: string;
  appId: string;
  host: string;
  state: string;
  deploymentId: string;
  log: string[];
  env: Record<string, string>;
}

const LONG = { timeout: 10 * 60_000 };

let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;

before(async () => {
  daemon = await startDaemon();
  ({ gitEnv } = await registerSshKey(daemon));
});

after(async () => {
  await daemon?.stop();
});

function meta(example: string): ExampleMeta {
  return JSON.parse(readFileSync(join(EXAMPLES, example, 'example.json'), 'utf8')) as ExampleMeta;
}

let appCount = 0;

/**
 * Creates an app for a fresh checkout of the example (after `edit` changed it), sets the
 * example's variables (plus GREETING, to see the app gets them) and pushes.
 */
async function deployExample(
  example: string,
  options: { env?: Record<string, string>; edit?: (dir: string) => void } = {},
): Promise<Deployed> {
  const dir = checkoutExample(example);
  if (options.edit) {
    options.edit(dir);
    commitAll(dir, 'test changes');
  }
  const env = { GREETING: `hello ${example}`, ...(options.env ?? meta(example).env ?? {}) };
  const appId = await createApp(daemon, dir, `${example.replace(/^node-/, '')}-${++appCount}`, env);
  return push({ dir, appId, host: `${appId}.localhost`, env });
}

/**
 * The deployment's log through `slipway logs --deployment-id`. A finished deployment always
 * has lines, so an empty answer is a failed CLI run (for example while dist/ is being rebuilt):
 * asked again, and reported with the CLI's error if it stays empty.
 */
async function logOf(appId: string, deploymentId: string): Promise<string[]> {
  let stderr = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const result = await daemon.cli(['logs', '--app', appId, '--deployment-id', deploymentId]);
    if (result.stdout.trim() !== '') return result.stdout.split('\n');
    stderr = result.stderr;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`slipway logs --deployment-id ${deploymentId} printed nothing: ${stderr}`);
}

/** Pushes the checkout's HEAD to its app and waits for the deployment to end. */
async function push(app: { dir: string; appId: string; host: string; env: Record<string, string> }): Promise<Deployed> {
  const result = await pushAndWait(daemon, app.dir, app.appId, gitEnv);
  const log = await logOf(app.appId, result.id);
  return { ...app, state: result.state, deploymentId: result.id, log };
}

function assertDeployed(deployed: Deployed, state = 'OK'): void {
  assert.equal(deployed.state, state, `deployment ${deployed.deploymentId} ended ${deployed.state}:\n${deployed.log.join('\n')}`);
}

/** A log line matching the pattern must exist (the message shows the whole log otherwise). */
function assertLogged(deployed: Deployed, pattern: RegExp): string {
  const line = deployed.log.find((l) => pattern.test(l));
  assert.ok(line, `no line matches ${pattern} in the log of ${deployed.deploymentId}:\n${deployed.log.join('\n')}`);
  return line;
}

async function facts(deployed: Deployed): Promise<Facts> {
  const response = await getThroughRouter(daemon, deployed.host);
  assert.equal(response.status, 200, response.body);
  return JSON.parse(response.body) as Facts;
}

type Variant = NonNullable<ExampleMeta['variants']>[number];

/**
 * Deploys each variant of an example (its variables set, the previous variant's removed) as a
 * new release of one app, and hands each deployment with what the app reported to `check`.
 */
async function deployEachVariant(
  example: string,
  appName: string,
  check: (deployed: Deployed, variant: Variant, seen: Facts) => void,
): Promise<void> {
  const { variants } = meta(example);
  assert.ok(variants && variants.length >= 4);
  const dir = checkoutExample(example);
  const appId = await createApp(daemon, dir, appName);
  const app = { dir, appId, host: `${appId}.localhost`, env: {} };
  let previous: Record<string, string> = {};
  for (const [index, variant] of variants.entries()) {
    for (const name of Object.keys(previous)) assert.equal((await daemon.cli(['env', 'rm', name], { cwd: dir })).code, 0);
    for (const [name, value] of Object.entries(variant.env))
      assert.equal((await daemon.cli(['env', 'set', name, value], { cwd: dir })).code, 0);
    previous = variant.env;
    newRelease(dir, `variant-${index}`);
    const deployed = await push(app);
    assertDeployed(deployed);
    check(deployed, variant, await facts(deployed));
  }
}

/** The example.json expectations, with the same keys examples-run.test.ts understands. */
function checkExpect(seen: Facts, expect: Facts | undefined): void {
  for (const [key, value] of Object.entries(expect ?? {})) {
    if (key === 'versionMajor')
      assert.equal(Number(String(seen.version).replace(/^v/, '').split('.')[0]), value, `major version of ${seen.version}`);
    else if (key === 'versionPrefix')
      assert.ok(String(seen.version).startsWith(String(value)), `version ${seen.version} should start with ${value}`);
    else assert.deepEqual(seen[key], value, `${key} in ${JSON.stringify(seen)}`);
  }
}

/** Deploys an example as example.json says and checks what the running app reports. */
async function deployAndCheck(example: string): Promise<{ deployed: Deployed; seen: Facts }> {
  const deployed = await deployExample(example);
  assertDeployed(deployed);
  const seen = await facts(deployed);
  assert.equal(seen.greeting, deployed.env.GREETING, 'the app sees its variables');
  assert.equal(seen.nodeEnv ?? null, deployed.env.NODE_ENV ?? null, 'NODE_ENV is what the app set, nothing else');
  checkExpect(seen, meta(example).expect);
  assertLogged(deployed, /^ {4}Build plan \(node\)$/);
  return { deployed, seen };
}

test('node-npm: npm chosen from package-lock.json, lifecycle scripts once each, Node 24.11.0 by default', LONG, async () => {
  const { deployed, seen } = await deployAndCheck('node-npm');
  assert.equal(seen.runtime, 'node');
  assert.equal(seen.version, 'v24.11.0');
  assert.equal(seen.startedBy, 'npm/11.6.1');
  assert.equal(seen.devDependency, true, 'NODE_ENV unset: devDependencies installed');
  assert.deepEqual(seen.lifecycle, ['preinstall', 'install', 'postinstall', 'prestart']);
  assertLogged(deployed, /Package manager: npm, because package-lock\.json is present/);
  assertLogged(deployed, /node 24\.11\.0 {2}\(/);
  assertLogged(deployed, /NODE_ENV is not set: an app in production needs NODE_ENV=production/);
  assertLogged(deployed, /^==> \[build\] npm install \(with devDependencies\): npm install/);
});

test('node-npm-ci: CC_NODE_BUILD_TOOL=npm-ci runs npm clean-install without devDependencies', LONG, async () => {
  const { deployed } = await deployAndCheck('node-npm-ci');
  assertLogged(deployed, /Package manager: npm, because CC_NODE_BUILD_TOOL=npm-ci: npm clean-install/);
  assertLogged(deployed, /^==> \[build\] npm ci \(without devDependencies\): npm ci --omit=dev/);
});

test('node-pnpm: pnpm-lock.yaml selects pnpm, the version packageManager pins builds and runs', LONG, async () => {
  const { deployed, seen } = await deployAndCheck('node-pnpm');
  assert.deepEqual(seen.lifecycle, ['preinstall', 'install', 'postinstall', 'prestart']);
  assertLogged(deployed, /Package manager: pnpm, because pnpm-lock\.yaml is present/);
  assertLogged(deployed, /pnpm 10\.34\.9 {2}\(/);
});

test(
  'node-yarn-berry: Yarn 4 from packageManager; the legacy CC_NODE_BUILD_TOOL=yarn2 still works with a deprecation warning',
  LONG,
  async () => {
    const { deployed, seen } = await deployAndCheck('node-yarn-berry');
    assert.deepEqual(seen.lifecycle, ['preinstall', 'install', 'postinstall', 'prestart']);
    assertLogged(
      deployed,
      /Package manager: Yarn berry, because yarn\.lock is present and package\.json declares "packageManager": "yarn@4\.18\.1"/,
    );
    assertLogged(deployed, /yarn workspaces focus --all --production/);

    assert.equal((await daemon.cli(['env', 'set', 'CC_NODE_BUILD_TOOL', 'yarn2'], { cwd: deployed.dir })).code, 0);
    newRelease(deployed.dir, 'yarn2');
    const legacy = await push(deployed);
    assertDeployed(legacy);
    assertLogged(legacy, /! CC_NODE_BUILD_TOOL=yarn2 is deprecated: set CC_NODE_BUILD_TOOL=yarn-berry/);
    assert.equal((await facts(legacy)).startedBy, 'yarn/4.18.1');
  },
);

test("node-yarn-pnp: Yarn 4 with Plug'n'Play deploys, starts, restarts and redeploys from its build cache", LONG, async () => {
  const { deployed, seen } = await deployAndCheck('node-yarn-pnp');
  assert.match(String(seen.pnp), /^\d+$/, 'the dependency came through .pnp.cjs');
  assertLogged(deployed, /Yarn berry with Plug'n'Play: \.pnp\.cjs loads packages from the zip files of \.slipway-cache\/yarn-berry/);

  const restarted = await daemon.cli(['restart'], { cwd: deployed.dir });
  assert.equal(restarted.code, 0, restarted.stderr);
  assert.equal((await facts(deployed)).dependency, 7200000, 'the restarted release still loads its dependency');

  newRelease(deployed.dir, 'from-cache');
  const again = await push(deployed);
  assertDeployed(again);
  assertLogged(again, /^A build cache exists for this toolchain: reusing it\.$/);
  const after = await facts(again);
  assert.equal(after.dependency, 7200000);
  assert.match(String(after.pnp), /^\d+$/);
});

test(
  'node-yarn1: yarn.lock without packageManager uses the system Yarn 1.22.22 and warns it is deprecated; so does CC_NODE_BUILD_TOOL=yarn',
  LONG,
  async () => {
    const { deployed, seen } = await deployAndCheck('node-yarn1');
    assert.deepEqual(seen.lifecycle, ['preinstall', 'install', 'postinstall', 'prestart']);
    assertLogged(deployed, /Package manager: Yarn 1, because yarn\.lock is present without a Yarn 2\+ "packageManager" field/);
    assertLogged(deployed, /! Yarn 1\.x is deprecated .*yarn set version stable/);

    assert.equal((await daemon.cli(['env', 'set', 'CC_NODE_BUILD_TOOL', 'yarn'], { cwd: deployed.dir })).code, 0);
    newRelease(deployed.dir, 'legacy-yarn');
    const pushed = Date.now();
    const legacy = await push(deployed);
    assertDeployed(legacy);
    assertLogged(legacy, /! CC_NODE_BUILD_TOOL=yarn is deprecated/);
    assertLogged(legacy, /! Yarn 1\.x is deprecated/);
    assert.equal((await facts(legacy)).startedBy, 'yarn/1.22.22');
    // The same Yarn with the same lockfile: the first build's node_modules is reused, no file of
    // it written again (Yarn 1 completes this lockfile, which lacks `resolved`, so it does not say
    // "Already up-to-date"; see NOTHING_TO_INSTALL below for the birth time).
    assertLogged(legacy, /^A build cache exists for this toolchain: reusing it\.$/);
    const installed = statSync(join(releaseDir(legacy), 'node_modules/is-number/package.json'));
    assert.ok(
      installed.birthtimeMs > 0 && installed.birthtimeMs < pushed,
      `node_modules/is-number/package.json was written again (born ${installed.birthtime.toISOString()})`,
    );
    assert.equal((await facts(legacy)).devDependency, true);
  },
);

test('node-bun: bun.lock selects Bun 1.3.1 for build and run', LONG, async () => {
  const { deployed, seen } = await deployAndCheck('node-bun');
  assert.equal(seen.startedBy, 'bun/1.3.1');
  assert.deepEqual(seen.lifecycle, ['postinstall']);
  assertLogged(deployed, /Package manager: Bun, because bun\.lock is present: Bun installs and runs the app/);
  assertLogged(deployed, /^==> \[build\] bun install \(without devDependencies\): bun install --production/);
});

/**
 * devDependencies installed, so each manager has a package to write on the first build and, with
 * node_modules kept, nothing on the second: pnpm and Bun say so; Yarn berry's node-modules linker
 * says nothing, and shows it by writing no file (the release's node_modules files are older than
 * the second push).
 */
const NOTHING_TO_INSTALL: Array<[example: string, line: RegExp | undefined]> = [
  ['node-pnpm', /^Already up to date$/],
  ['node-yarn-berry', undefined],
  ['node-bun', /^Checked \d+ installs? across \d+ packages? \(no changes\)/],
];

/** The release folder the deployment log names. */
function releaseDir(deployed: Deployed): string {
  return assertLogged(deployed, /^==> \[release\] Release ready in \//).replace(/^==> \[release\] Release ready in /, '');
}

for (const [example, nothingToInstall] of NOTHING_TO_INSTALL) {
  test(`${example}: a redeploy with an unchanged lockfile reuses node_modules`, LONG, async () => {
    const first = await deployExample(example, { env: { GREETING: 'kept', NODE_ENV: 'production', CC_NODE_DEV_DEPENDENCIES: 'install' } });
    assertDeployed(first);
    assertLogged(first, /^No build cache for this toolchain: performing a full build\.$/);
    if (nothingToInstall)
      assert.equal(
        first.log.some((l) => nothingToInstall.test(l)),
        false,
        `the first build installs:\n${first.log.join('\n')}`,
      );
    newRelease(first.dir, 'two');
    const pushed = Date.now();
    const second = await push(first);
    assertDeployed(second);
    assertLogged(second, /^A build cache exists for this toolchain: reusing it\.$/);
    if (nothingToInstall) assertLogged(second, nothingToInstall);
    // Made by the copy into the cache after the first build, then only moved (a rename keeps a
    // file's birth time): a file written by the second build's install would be newer.
    const installed = statSync(join(releaseDir(second), 'node_modules/is-number/package.json'));
    assert.ok(installed.birthtimeMs > 0, 'the file system records birth times (statx)');
    assert.ok(
      installed.birthtimeMs < pushed,
      `node_modules/is-number/package.json was written again by the second build (born ${installed.birthtime.toISOString()})`,
    );
    const seen = await facts(second);
    assert.equal(seen.devDependency, true, 'the release has the kept node_modules');
    if (example !== 'node-pnpm') return;

    // Another pnpm release: its node_modules layout may differ, so the build starts over.
    const packageJson = join(first.dir, 'package.json');
    writeFileSync(packageJson, readFileSync(packageJson, 'utf8').replace('"pnpm@10.34.9"', '"pnpm@10.20.0"'));
    commitAll(first.dir, 'pnpm 10.20.0');
    const third = await push(first);
    assertDeployed(third);
    assertLogged(third, /^No build cache for this toolchain: performing a full build\.$/);
    assert.equal(
      second.log.some((l) => /^\+ is-number 7\.0\.0$/.test(l)),
      false,
      'the second build installed nothing',
    );
    assertLogged(third, /^\+ is-number 7\.0\.0$/);
    assert.equal((await facts(third)).startedBy, 'pnpm/10.20.0');
  });
}

test('node-custom: CC_CUSTOM_BUILD_TOOL is the install step', LONG, async () => {
  const { deployed } = await deployAndCheck('node-custom');
  assertLogged(deployed, /Package manager: custom \(CC_CUSTOM_BUILD_TOOL\), because CC_NODE_BUILD_TOOL=custom/);
  assertLogged(deployed, /^==> \[build\] CC_CUSTOM_BUILD_TOOL: bash -c/);
});

test(
  'node-custom: CC_NODE_DEV_DEPENDENCIES decides for a custom npm or Yarn 1 command too, through redeploys of one app',
  LONG,
  async () => {
    await deployEachVariant('node-custom', 'custom-dev-deps', (deployed, variant, seen) => {
      checkExpect(seen, variant.expect);
      assertLogged(deployed, new RegExp(`devDependencies: ${variant.expect.devDependency ? 'installed' : 'not installed'} \\(`));
    });
  },
);

test('node-engines-pin: engines.node wins over CC_NODE_VERSION', LONG, async () => {
  const { deployed } = await deployAndCheck('node-engines-pin');
  assertLogged(deployed, /CC_NODE_VERSION=20 is not used: engines\.node in package\.json takes priority/);
});

test('node-version-minor: CC_NODE_VERSION as major.minor runs the newest patch of that minor', LONG, async () => {
  const { seen } = await deployAndCheck('node-version-minor');
  assert.match(String(seen.version), /^v22\.11\.\d+$/);
});

test('node-dev-deps: every variant of SPEC §4.4 rule 5 through redeploys of one app', LONG, async () => {
  await deployEachVariant('node-dev-deps', 'dev-deps', (deployed, variant, seen) => {
    assert.equal(seen.nodeEnv, variant.env.NODE_ENV ?? null);
    checkExpect(seen, variant.expect);
    assertLogged(deployed, new RegExp(`devDependencies: ${variant.expect.devDependency ? 'installed' : 'not installed'} \\(`));
  });
});

test('node-deno-mise: Deno from mise.toml is installed at build and serves the app', LONG, async () => {
  const { deployed, seen } = await deployAndCheck('node-deno-mise');
  assert.equal(seen.runtime, 'deno');
  assertLogged(deployed, /Deno from mise\.toml is on PATH at build and run/);
});

/**
 * The app ends cleanly (GET /exit, status 0): its poststart runs, the instance restarts, and
 * its prestart runs again; lifecycle.log, in the release, shows each of them in order.
 */
async function assertPoststartAfterCleanEnd(deployed: Deployed): Promise<void> {
  await getThroughRouter(daemon, deployed.host, '/exit').catch(() => undefined);
  const expected = ['prestart', 'poststart', 'prestart'];
  let last: unknown;
  await waitUntil(
    `poststart, then prestart again, in ${deployed.appId}`,
    async () => {
      const response = await getThroughRouter(daemon, deployed.host);
      if (response.status !== 200) return undefined;
      last = (JSON.parse(response.body) as Facts).lifecycle;
      return JSON.stringify(last) === JSON.stringify(expected) ? true : undefined;
    },
    90_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message}: the app reports ${JSON.stringify(last)}`);
  });
}

test('node-main-without-start: the main file runs with node, after prestart, and poststart runs when it ends cleanly', LONG, async () => {
  const { deployed, seen } = await deployAndCheck('node-main-without-start');
  assert.equal(seen.version, 'v24.11.0');
  assertLogged(
    deployed,
    /Start command: no scripts\.start, so the main file runs with node \(server\.js\), after prestart, then poststart when it exits with status 0/,
  );
  assertLogged(deployed, /^==> \[run\] Starting: bash -c node "\$@" && exec npm run poststart start \.\/server\.js$/);
  await assertPoststartAfterCleanEnd(deployed);
});

test('node-poststart: poststart runs after a clean end of the start script with npm, pnpm, Yarn 1, Yarn berry and Bun', LONG, async () => {
  const { variants } = meta('node-poststart');
  assert.ok(variants && variants.length >= 5);
  for (const variant of variants) {
    const deployed = await deployExample('node-poststart', { env: variant.env });
    assertDeployed(deployed);
    checkExpect(await facts(deployed), variant.expect);
    await assertPoststartAfterCleanEnd(deployed);
  }
});

test('node-https-redirect: through the router the app sees X-Forwarded-Proto http and redirects to https', LONG, async () => {
  const deployed = await deployExample('node-https-redirect');
  // OK means the health check (straight to the instance, no forwarded proto) got 200.
  assertDeployed(deployed);
  const response = await getThroughRouter(daemon, deployed.host, '/some/path?q=1');
  assert.equal(response.status, 301);
  assert.equal(response.headers.location, `https://${deployed.host}/some/path?q=1`);
});

test('node-sigterm: the app gets SIGTERM on redeploy and on stop, and what it logs then is in slipway logs', LONG, async () => {
  const expected = meta('node-sigterm').expectLog!;
  const { deployed } = await deployAndCheck('node-sigterm');
  const count = async () => {
    const logs = await daemon.cli(['logs', '--app', deployed.appId]);
    return logs.stdout.split('\n').filter((l) => l.includes(expected)).length;
  };
  assert.equal(await count(), 0);

  newRelease(deployed.dir, 'two');
  assertDeployed(await push(deployed));
  await waitUntil('the replaced instance to log its SIGTERM', async () => ((await count()) === 1 ? true : undefined));

  assert.equal((await daemon.cli(['stop', '--app', deployed.appId])).code, 0);
  await waitUntil('the stopped instance to log its SIGTERM', async () => ((await count()) === 2 ? true : undefined));
  const logs = await daemon.cli(['logs', '--app', deployed.appId]);
  assert.match(logs.stdout, /server closed, exiting/);
  assert.equal((await getThroughRouter(daemon, deployed.host)).status, 503);
});

test(
  'node-cached: a redeploy with an unchanged lockfile skips the install; a changed lockfile installs again; a malformed package.json then fails at its line and column',
  LONG,
  async () => {
    const { deployed: first, seen } = await deployAndCheck('node-cached');
    assert.equal(seen.express, '4.21.2');
    assertLogged(first, /^No build cache for this toolchain: performing a full build\.$/);

    newRelease(first.dir, 'two');
    const second = await push(first);
    assertDeployed(second);
    assertLogged(second, /^A build cache exists for this toolchain: reusing it\.$/);
    assertLogged(first, /^added \d+ packages in /);
    // node_modules from the first build was installed from this same package.json, lockfile and
    // npm: npm is not even started.
    assertLogged(
      second,
      /^node_modules kept from a build with the same package files, lockfile, settings and tool versions: npm install \(without devDependencies\) skipped\.$/,
    );
    assert.equal(
      second.log.some((l) => /^==> \[build\] npm install/.test(l)),
      false,
      'npm install did not run',
    );
    assert.equal((await facts(second)).release, 'two');
    assert.equal((await facts(second)).express, '4.21.2', 'the release has the kept node_modules');

    // The same dependencies in a lockfile written differently: another lockfile, so npm runs,
    // and finds the kept node_modules up to date.
    const lockfile = join(first.dir, 'package-lock.json');
    writeFileSync(lockfile, JSON.stringify(JSON.parse(readFileSync(lockfile, 'utf8')), null, 1));
    commitAll(first.dir, 'reformat the lockfile');
    const relocked = await push(first);
    assertDeployed(relocked);
    assertLogged(relocked, /^==> \[build\] npm install \(without devDependencies\)/);
    assertLogged(relocked, /^up to date in /);

    const packageJson = join(first.dir, 'package.json');
    const text = readFileSync(packageJson, 'utf8');
    // A trailing comma after the last dependency: line 10 of the example's package.json.
    writeFileSync(packageJson, text.replace('"express": "4.21.2"', '"express": "4.21.2",'));
    const brokenLine = text.split('\n').findIndex((l) => l.includes('"express": "4.21.2"')) + 1;
    commitAll(first.dir, 'break package.json');
    const broken = await push(first);
    assertDeployed(broken, 'FAIL');
    assertLogged(broken, new RegExp(`Build failed: package\\.json is not valid JSON: .* at line ${brokenLine + 1}, column \\d+\\.`));
    assertLogged(broken, /^Hint: Fix package\.json at line \d+, column \d+/);
    assertLogged(broken, /^The previous release keeps serving\.$/);
    const still = await facts(broken);
    assert.equal(still.release, 'two', 'the previous release still serves');
  },
);

test('refused builds say why: unknown CC_NODE_BUILD_TOOL, no start command, unsatisfiable engines.node', LONG, async () => {
  const dir = checkoutExample('node-main-without-start');
  const appId = await createApp(daemon, dir, 'refused', { NODE_ENV: 'production', CC_NODE_BUILD_TOOL: 'gradle' });
  const app = { dir, appId, host: `${appId}.localhost`, env: {} };

  newRelease(dir, 'unknown-tool');
  const unknownTool = await push(app);
  assertDeployed(unknownTool, 'FAIL');
  assertLogged(
    unknownTool,
    /Build failed: CC_NODE_BUILD_TOOL is "gradle", which is not a known package manager\. Valid values: bun, npm, npm-install, npm-ci, pnpm, yarn-berry, custom \(legacy, deprecated: yarn, yarn2\)\./,
  );
  assert.equal((await daemon.cli(['env', 'rm', 'CC_NODE_BUILD_TOOL'], { cwd: dir })).code, 0);

  const packageJson = join(dir, 'package.json');
  const original = JSON.parse(readFileSync(packageJson, 'utf8')) as Record<string, unknown>;
  const { main: _main, ...withoutMain } = original;
  writeFileSync(packageJson, JSON.stringify(withoutMain, null, 2));
  commitAll(dir, 'no start command');
  const noStart = await push(app);
  assertDeployed(noStart, 'FAIL');
  assertLogged(
    noStart,
    /Build failed: No start command: .*looks for a start command in this order: CC_RUN_COMMAND, scripts\.start in package\.json, main in package\.json\./,
  );
  assertLogged(noStart, /The repository has server\.js/);

  writeFileSync(packageJson, JSON.stringify({ ...original, engines: { node: '18.99' } }, null, 2));
  commitAll(dir, 'impossible engines');
  const impossible = await push(app);
  assertDeployed(impossible, 'FAIL');
  assertLogged(
    impossible,
    /Build failed: No available node version matches "18\.99"; nearest available versions below: 18\.20\.\d+.*; above: 19\.0\.0/,
  );
  assert.notEqual((await getThroughRouter(daemon, app.host)).status, 200, 'nothing was ever released');
});

test('several lockfiles: the documented order picks one and a warning names them all', LONG, async () => {
  const deployed = await deployExample('node-pnpm', {
    edit: (dir) => cpSync(join(EXAMPLES, 'node-npm', 'package-lock.json'), join(dir, 'package-lock.json')),
  });
  assertDeployed(deployed);
  assertLogged(deployed, /Package manager: pnpm, because pnpm-lock\.yaml is present/);
  assertLogged(
    deployed,
    /! Several package managers' lockfiles are committed: pnpm-lock\.yaml, package-lock\.json\. .*used pnpm-lock\.yaml/,
  );
  assert.equal((await facts(deployed)).startedBy, 'pnpm/10.34.9');
});

test(
  'repository hygiene: a committed node_modules and a .gitignore without /node_modules give warnings; CC_RUN_COMMAND starts the app',
  LONG,
  async () => {
    const deployed = await deployExample('node-main-without-start', {
      env: { NODE_ENV: 'production', CC_RUN_COMMAND: 'GREETING=from-run-command exec node server.js' },
      edit: (dir) => {
        writeFileSync(join(dir, '.gitignore'), '/lifecycle.log\n');
        mkdirSync(join(dir, 'node_modules', 'left-over'), { recursive: true });
        writeFileSync(join(dir, 'node_modules', 'left-over', 'index.js'), 'module.exports = 1;\n');
      },
    });
    assertDeployed(deployed);
    assertLogged(deployed, /! node_modules is committed: .*git rm -r --cached node_modules/);
    assertLogged(deployed, /! \.gitignore does not mention \/node_modules: add the line \/node_modules/);
    assertLogged(deployed, /^==> \[run\] Starting: bash -c/);
    assert.equal((await facts(deployed)).greeting, 'from-run-command');
    rmSync(deployed.dir, { recursive: true, force: true });
  },
);
