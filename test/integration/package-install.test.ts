/**
 * slipway as a package: `npm pack` of the repository's files (its prepack builds dist/), then
 * `npm install -g --prefix <tmp>` of that tarball, as a user installs it; the installed
 * `slipway` answers --version and runs the daemon until its API and console answer. The pack
 * runs in a copy of the repository, so the dist/ the other tests run is never rewritten.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../support/free-port.js';
import { removeAppUsersAtExit } from '../support/app-users-cleanup.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const { version } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };

let work: string;
let tarball: string;
let slipway: string;

before(() => {
  work = mkdtempSync(join(tmpdir(), 'slipway-package-'));
  chmodSync(work, 0o755); // the data folder inside it must be reachable by the router's and apps' users
  const copy = join(work, 'repo');
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean);
  for (const file of files) {
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    try {
      cpSync(join(REPO, file), join(copy, file));
    } catch {
      // listed but deleted in the working tree
    }
  }
  // The build tools (prepack runs tsc) come from the repository's own dependencies.
  symlinkSync(join(REPO, 'node_modules'), join(copy, 'node_modules'));
  const began = performance.now();
  execFileSync('npm', ['pack', '--pack-destination', work], { cwd: copy, stdio: ['ignore', 'ignore', 'pipe'], timeout: 300_000 });
  tarball = join(work, readdirSync(work).find((f) => f.endsWith('.tgz'))!);
  const packed = performance.now();
  // This machine reaches no host but the package registries: better-sqlite3 is compiled here
  // (with the headers of the installed Node) instead of fetching a prebuilt binary; without
  // optimisation (CFLAGS come after node-gyp's -O3), which takes a fraction of the time and is
  // enough for a daemon that only has to start.
  execFileSync('npm', ['install', '-g', '--prefix', join(work, 'prefix'), '--prefer-offline', '--no-audit', '--no-fund', tarball], {
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 900_000,
    env: { ...process.env, npm_config_build_from_source: 'true', CFLAGS: '-O0', CXXFLAGS: '-O0' },
  });
  console.log(`# npm pack ${Math.round(packed - began)} ms, npm install -g ${Math.round(performance.now() - packed)} ms`);
  slipway = join(work, 'prefix', 'bin', 'slipway');
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test('the package holds the built CLI, daemon and console, and no tests or examples', () => {
  const listed = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((f) => f.replace(/^package\//, ''));
  for (const needed of [
    'bin/slipway.js',
    'dist/src/cli/main.js',
    'dist/src/daemon/daemon.js',
    'src/console/static/index.html',
    'packaging/slipway.service',
    'package.json',
  ]) {
    assert.ok(listed.includes(needed), `${needed} is in the package`);
  }
  assert.ok(
    listed.some((f) => f.startsWith('dist/console/') && f.endsWith('.js')),
    "the console's scripts are in the package",
  );
  const unwanted = listed.filter((f) => /(^|\/)(test|examples|bench|scripts)\/|\.test\.js|\/test-[^/]*\.js|\.ts$/.test(f));
  assert.deepEqual(unwanted, []);
});

test('the installed slipway answers --version and runs the daemon until its API and console answer', async () => {
  assert.equal(execFileSync(slipway, ['--version'], { encoding: 'utf8' }).trim(), `slipway ${version}`);

  const dataDir = join(work, 'data');
  removeAppUsersAtExit(dataDir);
  const [api, ssh, router, https] = [await freePort(), await freePort(), await freePort(), await freePort()];
  let daemon: ChildProcess | undefined;
  let output = '';
  for (let attempt = 0; attempt < 5 && !/slipway is ready/.test(output); attempt++) {
    output = '';
    const subnet = `10.${200 + Math.floor(Math.random() * 50)}.0.0/16`;
    daemon = spawn(
      slipway,
      [
        'server',
        '--data-dir',
        dataDir,
        '--api-port',
        String(api),
        '--ssh-port',
        String(ssh),
        '--router-port',
        String(router),
        '--https-port',
        String(https),
        '--subnet',
        subnet,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const child = daemon;
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 120_000);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      child.stderr!.on('data', () => {
        if (/slipway is ready/.test(output)) done();
      });
      child.once('exit', done);
    });
    // Another daemon of this machine holds that subnet: draw another.
    if (!/already runs its apps on the subnet/.test(output)) break;
  }
  try {
    assert.match(output, /slipway is ready/, output);
    const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    // The installed CLI against the installed daemon.
    const me = execFileSync(slipway, ['whoami'], {
      encoding: 'utf8',
      env: { ...process.env, XDG_CONFIG_HOME: join(work, 'config'), SLIPWAY_URL: `http://127.0.0.1:${api}`, SLIPWAY_TOKEN: token },
    });
    assert.match(me, /admin/);
    const page = await fetch(`http://127.0.0.1:${api}/`);
    assert.equal(page.status, 200);
    const script = /<script[^>]+src="([^"]+)"/.exec(await page.text())?.[1];
    assert.ok(script, "the console's page, from the installed package");
    const code = await fetch(`http://127.0.0.1:${api}${script}`);
    assert.equal(code.status, 200, `${script}: the console's compiled scripts are installed`);
  } finally {
    if (daemon && daemon.exitCode === null) {
      const exited = new Promise((resolve) => daemon!.once('exit', resolve));
      // `system stop` ends the router and the firewall with it; SIGTERM alone would leave them
      // running, as it does for a user (the data plane outlives the daemon).
      const tokenFile = join(dataDir, 'admin-token');
      // Run asynchronously: the daemon writes to pipes this process reads while it stops.
      const stopped = existsSync(tokenFile)
        ? await new Promise<boolean>((resolve) =>
            execFile(
              slipway,
              ['system', 'stop', '--yes'],
              {
                timeout: 120_000,
                env: {
                  ...process.env,
                  XDG_CONFIG_HOME: join(work, 'config'),
                  SLIPWAY_URL: `http://127.0.0.1:${api}`,
                  SLIPWAY_TOKEN: readFileSync(tokenFile, 'utf8').trim(),
                },
              },
              (error) => resolve(error === null),
            ),
          )
        : false;
      if (!stopped) daemon.kill('SIGTERM');
      await exited;
    }
  }
});
