/**
 * Runs the example apps' plans for real: tools fetched by exact version from the npm registry
 * (the toolchains room), the build commands, the before-start commands and the start command
 * as argv, then GET / and a SIGTERM. No sandbox or router here (the pipeline's tests cover
 * those): this checks that each plan drives the real package managers as docs/behaviour.md says.
 *
 * Tools are cached in SLIPWAY_TOOLCHAIN_CACHE (default: <tmp>/slipway-test-toolchains).
 */
import assert from 'node:assert/strict';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { APP_CACHE_TOKEN } from '../../pipeline/prepare-toolchain.js';
import { NpmVersionCatalog } from '../../toolchains/catalog.js';
import { ensureTool, toolPath } from '../../toolchains/ensure-tool.js';
import type { BuildPlan, PlanCommand } from '../plan.js';
import { makeNodeProvider } from './node-provider.js';
import { examplePath } from '../../../test/support/node-provider-fixtures.js';
import { freePort } from '../../../test/support/free-port.js';

const toolCache = process.env.SLIPWAY_TOOLCHAIN_CACHE ?? path.join(tmpdir(), 'slipway-test-toolchains');
const catalog = new NpmVersionCatalog(toolCache);
const provider = makeNodeProvider();
const registry = execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim();

/** The machine's trust and proxy settings, which every package manager needs to reach the registry. */
const MACHINE_NETWORK_ENV = Object.fromEntries(
  Object.entries(process.env).filter(
    (entry): entry is [string, string] =>
      entry[1] !== undefined &&
      /^(NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|HTTPS?_PROXY|NO_PROXY|https?_proxy|no_proxy)$/.test(entry[0]),
  ),
);

const made: string[] = [];
after(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

interface Prepared {
  dir: string;
  plan: BuildPlan;
  baseEnv: Record<string, string>;
}

function commandEnv(prepared: Prepared, command: PlanCommand, extra: Record<string, string> = {}): Record<string, string> {
  return { ...prepared.baseEnv, ...prepared.plan.env, ...(command.env ?? {}), ...extra };
}

/** A plan command's program and its arguments. */
function programOf(command: PlanCommand): [string, string[]] {
  const [program, ...args] = command.argv;
  if (program === undefined) throw new Error('A plan command has an empty argv.');
  return [program, args];
}

async function runToEnd(prepared: Prepared, command: PlanCommand): Promise<string> {
  const [program, args] = programOf(command);
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, {
      cwd: path.join(prepared.dir, command.cwd ?? '.'),
      env: commandEnv(prepared, command),
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(output) : reject(new Error(`${command.argv.join(' ')} exited ${code}:\n${output}`))));
  });
}

function withAppCache(plan: BuildPlan, appCache: string): BuildPlan {
  const fill = (command: PlanCommand): PlanCommand => ({
    ...command,
    argv: command.argv.map((a) => a.split(APP_CACHE_TOKEN).join(appCache)),
    ...(command.env
      ? { env: Object.fromEntries(Object.entries(command.env).map(([k, v]) => [k, v.split(APP_CACHE_TOKEN).join(appCache)])) }
      : {}),
  });
  return { ...plan, build: plan.build.map(fill), beforeStart: plan.beforeStart.map(fill), start: fill(plan.start) };
}

/** Copies the example, makes its plan, fetches its tools and runs its build. */
async function build(name: string, appEnv: Record<string, string>): Promise<Prepared> {
  return buildWithFiles(name, {}, appEnv);
}

/** As build, with extra files added to the copy of the example first. */
async function buildWithFiles(name: string, extraFiles: Record<string, string>, appEnv: Record<string, string>): Promise<Prepared> {
  const dir = await mkdtemp(path.join(tmpdir(), `slipway-run-${name}-`));
  made.push(dir);
  await cp(examplePath(name), dir, { recursive: true });
  for (const [file, content] of Object.entries(extraFiles)) await writeFile(path.join(dir, file), content);
  const home = path.join(dir, '.home');
  await mkdir(home);
  const env = { ...appEnv, npm_config_registry: registry };
  // The app's own cache folder, as the pipeline fills it in (pnpm's store lives there).
  const appCache = path.join(dir, '.app-cache');
  const plan = withAppCache(await provider.plan({ sourceDir: dir, appType: 'node', env, catalog }), appCache);
  const installs = [];
  for (const tool of plan.toolchain) installs.push(await ensureTool(toolCache, tool.name, tool.version));
  const baseEnv = { ...MACHINE_NETWORK_ENV, PATH: `${toolPath(installs)}:/usr/local/bin:/usr/bin:/bin`, HOME: home, ...env };
  const prepared = { dir, plan, baseEnv };
  for (const file of plan.files) {
    await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true });
    await writeFile(path.join(dir, file.path), file.content, { mode: file.secret ? 0o600 : 0o644 });
  }
  for (const command of plan.build) await runToEnd(prepared, command);
  for (const file of plan.files.filter((f) => f.secret)) await rm(path.join(dir, file.path));
  return prepared;
}

interface Running {
  child: ChildProcess;
  port: number;
  logs: () => string;
  exited: Promise<number | null>;
}

async function start(prepared: Prepared): Promise<Running> {
  for (const command of prepared.plan.beforeStart) await runToEnd(prepared, command);
  const port = await freePort();
  const command = prepared.plan.start;
  // Its own process group, signalled as a whole, as tini -g does in the instance's sandbox.
  const [program, args] = programOf(command);
  const child = spawn(program, args, {
    cwd: prepared.dir,
    env: commandEnv(prepared, command, { PORT: String(port) }),
    detached: true,
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await fetch(`http://127.0.0.1:${port}/`);
      break;
    } catch {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the app did not answer on port ${port}:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return { child, port, logs: () => output, exited };
}

function signalGroup(running: Running, signal: NodeJS.Signals): void {
  try {
    process.kill(-running.child.pid!, signal);
  } catch {
    // The group is gone already.
  }
}

async function stop(running: Running): Promise<void> {
  signalGroup(running, 'SIGTERM');
  const code = await Promise.race([running.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000))]);
  if (code === 'timeout') {
    signalGroup(running, 'SIGKILL');
    assert.fail(`the app ignored SIGTERM for 10 s:\n${running.logs()}`);
  }
}

/**
 * The app ends on its own with status 0 (GET /exit): the start command must then run poststart
 * once and exit 0 itself. Returns lifecycle.log.
 */
async function endCleanly(prepared: Prepared, running: Running): Promise<string[]> {
  await fetch(`http://127.0.0.1:${running.port}/exit`)
    .then((r) => r.text())
    .catch(() => undefined);
  const code = await Promise.race([running.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 30_000))]);
  if (code === 'timeout') signalGroup(running, 'SIGKILL');
  assert.equal(code, 0, `the start command ended ${code}:\n${running.logs()}`);
  return (await readFile(path.join(prepared.dir, 'lifecycle.log'), 'utf8')).split('\n').filter(Boolean);
}

async function getFacts(running: Running): Promise<Record<string, unknown>> {
  const response = await fetch(`http://127.0.0.1:${running.port}/`);
  assert.equal(response.status, 200);
  return (await response.json()) as Record<string, unknown>;
}

async function exampleMeta(name: string): Promise<{
  env?: Record<string, string>;
  expect?: Record<string, unknown>;
  variants?: Array<{ env: Record<string, string>; expect: Record<string, unknown> }>;
}> {
  return JSON.parse(await readFile(path.join(examplePath(name), 'example.json'), 'utf8'));
}

function checkExpect(facts: Record<string, unknown>, expect: Record<string, unknown> | undefined): void {
  for (const [key, value] of Object.entries(expect ?? {})) {
    if (key === 'versionMajor') assert.equal(Number(String(facts.version).replace(/^v/, '').split('.')[0]), value, 'major version');
    else if (key === 'versionPrefix')
      assert.ok(String(facts.version).startsWith(String(value)), `version ${facts.version} should start with ${value}`);
    else assert.deepEqual(facts[key], value, key);
  }
}

/** Builds and starts an example with its example.json env, checks GET / and stops it with SIGTERM. */
async function deployExample(name: string, extraEnv: Record<string, string> = {}, variant?: number) {
  const meta = await exampleMeta(name);
  const chosen = variant === undefined ? { env: meta.env ?? {}, expect: meta.expect } : meta.variants?.[variant];
  if (!chosen) throw new Error(`examples/${name}/example.json has no variant ${variant}.`);
  const appEnv = { GREETING: `hello ${name}`, ...chosen.env, ...extraEnv };
  const prepared = await build(name, appEnv);
  const running = await start(prepared);
  try {
    const facts = await getFacts(running);
    assert.equal(facts.greeting, appEnv.GREETING, 'the app sees its environment');
    checkExpect(facts, chosen.expect);
    return { facts, running, prepared };
  } finally {
    await stop(running);
  }
}

const LONG = { timeout: 15 * 60_000 };

describe('example apps built and run with the real tools', { concurrency: 1 }, () => {
  for (const [name, runtime] of [
    ['node-npm', 'node'],
    ['node-pnpm', 'node'],
    ['node-yarn1', 'node'],
    ['node-yarn-berry', 'node'],
  ] as const) {
    it(`${name}: preinstall, install, postinstall, prestart each run once, in order`, LONG, async () => {
      const { facts } = await deployExample(name);
      assert.equal(facts.runtime, runtime);
      assert.deepEqual(facts.lifecycle, ['preinstall', 'install', 'postinstall', 'prestart']);
      assert.equal(facts.version, 'v24.11.0');
    });
  }

  it("node-yarn-pnp: Yarn 4 with Plug'n'Play loads the dependency through .pnp.cjs", LONG, async () => {
    const { facts, prepared } = await deployExample('node-yarn-pnp');
    assert.match(String(facts.pnp), /^\d+$/, "the app runs under the Plug'n'Play runtime");
    assert.deepEqual(prepared.plan.cacheDirsInRelease, ['.slipway-cache/yarn-berry']);
  });

  it('node-npm-ci: npm ci without devDependencies', LONG, async () => {
    await deployExample('node-npm-ci');
  });

  it('node-bun: Bun 1.3.1 installs without devDependencies and runs the app', LONG, async () => {
    const { facts } = await deployExample('node-bun');
    assert.deepEqual(facts.lifecycle, ['postinstall']);
    assert.match(String(facts.startedBy), /^bun\/1\.3\.1$/);
  });

  it('node-custom: CC_CUSTOM_BUILD_TOOL ran, and devDependencies follow CC_NODE_DEV_DEPENDENCIES with npm and Yarn 1', LONG, async () => {
    await deployExample('node-custom');
    for (const variant of [0, 1, 2, 3]) await deployExample('node-custom', {}, variant);
  });

  it('node-engines-pin and node-version-minor: the Node version asked for', LONG, async () => {
    await deployExample('node-engines-pin');
    await deployExample('node-version-minor');
  });

  it('node-dev-deps: devDependencies installed and skipped as the devDependencies table says', LONG, async () => {
    for (const variant of [0, 1, 2, 3]) await deployExample('node-dev-deps', {}, variant);
  });

  it('node-deno-mise: Deno from mise.toml serves the app', LONG, async () => {
    await deployExample('node-deno-mise');
  });

  it(
    'node-poststart: poststart runs once after a clean end of the start script, with npm, pnpm, Yarn 1, Yarn berry and Bun',
    LONG,
    async () => {
      for (const variant of [0, 1, 2, 3, 4]) {
        const meta = await exampleMeta('node-poststart');
        const prepared = await build('node-poststart', meta.variants![variant]!.env);
        const running = await start(prepared);
        const facts = await getFacts(running);
        assert.deepEqual(facts.lifecycle, ['prestart'], `variant ${variant}`);
        assert.deepEqual(await endCleanly(prepared, running), ['prestart', 'poststart'], `variant ${variant}: ${running.logs()}`);
      }
    },
  );

  it('node-main-without-start: main runs with node, after prestart, and poststart after a clean end', LONG, async () => {
    const prepared = await build('node-main-without-start', {});
    const running = await start(prepared);
    assert.deepEqual((await getFacts(running)).lifecycle, ['prestart']);
    assert.deepEqual(await endCleanly(prepared, running), ['prestart', 'poststart'], running.logs());
  });

  it('node-main-without-start: main runs with node', LONG, async () => {
    const { facts } = await deployExample('node-main-without-start');
    assert.equal(facts.version, 'v24.11.0');
  });

  it('node-sigterm: SIGTERM to the start command reaches the app', LONG, async () => {
    const { running } = await deployExample('node-sigterm');
    assert.match(running.logs(), /received SIGTERM, closing the server/);
    assert.match(running.logs(), /server closed, exiting/);
  });

  it('node-https-redirect: redirects when X-Forwarded-Proto is http', LONG, async () => {
    const prepared = await build('node-https-redirect', { NODE_ENV: 'production' });
    const running = await start(prepared);
    try {
      const redirected = await fetch(`http://127.0.0.1:${running.port}/some/path?q=1`, {
        headers: { 'x-forwarded-proto': 'http', 'x-forwarded-host': 'app.example.test' },
        redirect: 'manual',
      });
      assert.equal(redirected.status, 301);
      assert.equal(redirected.headers.get('location'), 'https://app.example.test/some/path?q=1');
      const secure = await fetch(`http://127.0.0.1:${running.port}/`, { headers: { 'x-forwarded-proto': 'https' } });
      assert.equal(secure.status, 200);
    } finally {
      await stop(running);
    }
  });
});

/**
 * A private npm registry for the tests: serves @slipway-test/secret-greeting (packed from
 * examples/node-private-registry-package with the real npm) only to requests carrying the
 * right token or basic credentials, like a real private registry.
 */
async function startPrivateRegistry(token: string, basic: string) {
  const { createServer: createHttpServer } = await import('node:http');
  const { createHash } = await import('node:crypto');
  const packDir = await mkdtemp(path.join(tmpdir(), 'slipway-registry-'));
  made.push(packDir);
  const packed = execFileSync(
    'npm',
    ['pack', '--pack-destination', packDir, examplePath('node-private-registry-package/secret-greeting')],
    {
      encoding: 'utf8',
      env: { ...process.env, npm_config_update_notifier: 'false' },
    },
  )
    .trim()
    .split('\n')
    .pop()!;
  const tarball = await readFile(path.join(packDir, packed));
  const name = '@slipway-test/secret-greeting';
  const seen: string[] = [];
  const server = createHttpServer((req, res) => {
    const auth = req.headers.authorization ?? '';
    const allowed = auth === `Bearer ${token}` || auth === `Basic ${Buffer.from(basic).toString('base64')}`;
    seen.push(`${req.method} ${req.url} ${allowed ? 'authorized' : auth ? 'bad-credentials' : 'anonymous'}`);
    if (!allowed) {
      res.writeHead(401, { 'www-authenticate': 'Bearer', 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'authentication required' }));
      return;
    }
    const url = decodeURIComponent(req.url ?? '');
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    if (url === `/${name}`) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          name,
          'dist-tags': { latest: '1.0.0' },
          // Yarn 4 holds back versions without a publish time (its minimal-age gate).
          time: { created: '2020-01-01T00:00:00.000Z', modified: '2020-01-01T00:00:00.000Z', '1.0.0': '2020-01-01T00:00:00.000Z' },
          versions: {
            '1.0.0': {
              name,
              version: '1.0.0',
              main: 'index.js',
              dist: {
                tarball: `${base}/${name}/-/secret-greeting-1.0.0.tgz`,
                shasum: createHash('sha1').update(tarball).digest('hex'),
                integrity: `sha512-${createHash('sha512').update(tarball).digest('base64')}`,
              },
            },
          },
        }),
      );
      return;
    }
    if (url === `/${name}/-/secret-greeting-1.0.0.tgz`) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(tarball);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: `127.0.0.1:${(server.address() as { port: number }).port}`,
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('private registry credentials with the real package managers', { concurrency: 1 }, () => {
  const TOKEN = 'test-token-0123456789abcdef';
  const BASIC = 'deployer:s3cret-pass';

  for (const [buildTool, credentials] of [
    ['npm', { NPM_TOKEN: TOKEN }],
    ['npm', { CC_NPM_BASIC_AUTH: BASIC }],
    ['pnpm', { NPM_TOKEN: TOKEN }],
    ['pnpm', { CC_NPM_BASIC_AUTH: BASIC }],
    ['yarn', { NPM_TOKEN: TOKEN }],
    ['yarn', { CC_NPM_BASIC_AUTH: BASIC }],
    ['yarn-berry', { NPM_TOKEN: TOKEN }],
    ['yarn-berry', { CC_NPM_BASIC_AUTH: BASIC }],
    ['bun', { NPM_TOKEN: TOKEN }],
    ['bun', { CC_NPM_BASIC_AUTH: BASIC }],
  ] as const) {
    it(`${buildTool} with ${Object.keys(credentials)[0]} installs the private package`, LONG, async () => {
      const registry = await startPrivateRegistry(TOKEN, BASIC);
      try {
        // The project sends its scope to the registry (Yarn berry refuses plain-http registries
        // unless whitelisted; the test registry is plain http); public packages come from the default one.
        const projectNpmrc = `@slipway-test:registry=http://${registry.host}/\nfund=false\n`;
        const projectFiles: Record<string, string> =
          buildTool === 'yarn-berry'
            ? {
                '.yarnrc.yml': `unsafeHttpWhitelist:\n  - 127.0.0.1\nnodeLinker: node-modules\nnpmScopes:\n  slipway-test:\n    npmRegistryServer: "http://${registry.host}"\n`,
              }
            : { '.npmrc': projectNpmrc };
        const prepared = await buildWithFiles('node-private-registry', projectFiles, {
          NODE_ENV: 'production',
          CC_NODE_BUILD_TOOL: buildTool,
          CC_NPM_REGISTRY: `http://${registry.host}`,
          ...credentials,
        });
        const running = await start(prepared);
        try {
          const facts = await getFacts(running);
          assert.equal(facts.secretGreeting, 'hello from the private registry');
          assert.equal(facts.publicDependency, true);
          assert.equal(facts.credentialsFilePresent, false);
          if (buildTool !== 'yarn-berry')
            assert.deepEqual(facts.projectNpmrc, projectNpmrc.trim().split('\n'), "the project's .npmrc is kept as committed");
        } finally {
          await stop(running);
        }
        assert.ok(
          registry.seen.some((line) => line.endsWith('authorized')),
          registry.seen.join('\n'),
        );
        assert.ok(
          registry.seen.every((line) => line.includes('@slipway-test')),
          `the private registry was asked for public packages:\n${registry.seen.join('\n')}`,
        );
        assert.ok(!registry.seen.some((line) => line.endsWith('bad-credentials')), registry.seen.join('\n'));
      } finally {
        await registry.close();
      }
    });
  }

  it('a wrong token fails the build', LONG, async () => {
    const registry = await startPrivateRegistry(TOKEN, BASIC);
    try {
      await assert.rejects(
        buildWithFiles(
          'node-private-registry',
          { '.npmrc': `@slipway-test:registry=http://${registry.host}/\n` },
          { NODE_ENV: 'production', NPM_TOKEN: 'wrong-token', CC_NPM_REGISTRY: `http://${registry.host}` },
        ),
        /exited 1/,
      );
    } finally {
      await registry.close();
    }
  });
});
