import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { runCli, SLIPWAY_BIN } from '../support/cli.js';
import { checkoutExample, commitAll, createApp, getThroughRouter, newRelease, registerSshKey } from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';

let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let dir: string;
let appId: string;

before(async () => {
  daemon = await startDaemon();
  ({ gitEnv } = await registerSshKey(daemon));
  dir = checkoutExample('node-hello');
  appId = await createApp(daemon, dir, 'hello');
});

after(async () => {
  await daemon?.stop();
});

/** The CLI as a long-running process (following logs), with its output so far. */
function startCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  cwd = dir,
): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [SLIPWAY_BIN, ...args], {
    cwd,
    env: { ...process.env, ...gitEnv, SLIPWAY_URL: daemon.apiUrl, SLIPWAY_TOKEN: daemon.adminToken, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Runs a command under a pseudo-terminal (util-linux `script`), as typed in a terminal. */
function startInTerminal(args: string[]): ReturnType<typeof startCli> {
  const command = [process.execPath, SLIPWAY_BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    cwd: dir,
    env: { ...process.env, SLIPWAY_URL: daemon.apiUrl, SLIPWAY_TOKEN: daemon.adminToken },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

test('--version, help for a command, a topic alone, a typo and a missing argument', async () => {
  const version = await runCli(['--version']);
  assert.equal(version.code, 0);
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  assert.equal(version.stdout, `slipway ${manifest.version}\n`);
  assert.equal((await runCli(['-v'])).stdout, version.stdout);
  assert.equal((await runCli(['version'])).stdout, version.stdout);

  const help = await runCli(['help', 'logs']);
  assert.equal(help.code, 0);
  for (const option of ['--since', '--until', '--search', '--no-follow', '--lines', '--deployment-id'])
    assert.match(help.stdout, new RegExp(`${option}\\b.*\\w`));
  assert.match(help.stdout, /Examples:\n {2}slipway logs/);
  assert.equal((await runCli(['logs', '--help'])).stdout, help.stdout);

  const topic = await runCli(['addon']);
  assert.equal(topic.code, 0);
  assert.match(topic.stdout, /addon create +Create an add-on/);

  const typo = await runCli(['stauts']);
  assert.equal(typo.code, 2);
  assert.match(typo.stderr, /Unknown command: slipway stauts\nDid you mean `slipway status`\?/);

  const missing = await runCli(['addon', 'create', 'postgresql']);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /Missing argument <addon-name>/);

  const bash = await runCli(['completion', 'bash']);
  assert.equal(bash.code, 0);
  const offered = execFileSync(
    'bash',
    ['-c', 'eval "$(cat)"; COMP_WORDS=(slipway tokens r); COMP_CWORD=2; _slipway; echo "${COMPREPLY[@]}"'],
    { input: bash.stdout, encoding: 'utf8' },
  );
  assert.equal(offered, 'revoke\n');
  const fish = await runCli(['completion', 'fish']);
  assert.equal(fish.code, 2);
  assert.match(fish.stderr, /slipway completes bash and zsh/);

  const global = await runCli(['help']);
  for (const line of global.stdout.split('\n')) assert.ok(line.length <= 100, line);
});

test('whoami (and profile) say who is logged in where; logout forgets the saved login', async () => {
  const who = await daemon.cli(['whoami']);
  assert.equal(who.code, 0, who.stderr);
  assert.match(who.stdout, /user +admin \(administrator\)/);
  assert.match(who.stdout, new RegExp(`daemon +${daemon.apiUrl}`));
  assert.match(who.stdout, /organisations +default \(owner\)/);
  const profile = JSON.parse((await daemon.cli(['profile', '--format', 'json'])).stdout);
  assert.equal(profile.user.name, 'admin');

  const configHome = mkdtempSync(join(tmpdir(), 'slipway-cfg-'));
  const env = { XDG_CONFIG_HOME: configHome, SLIPWAY_URL: '', SLIPWAY_TOKEN: '' };
  assert.equal((await daemon.cli(['login', '--url', daemon.apiUrl, '--token', daemon.adminToken], { env })).code, 0);
  assert.equal((await daemon.cli(['whoami'], { env })).code, 0);
  const out = await daemon.cli(['logout'], { env });
  assert.equal(out.code, 0, out.stderr);
  assert.ok(!existsSync(join(configHome, 'slipway', 'config.json')));
  const after = await daemon.cli(['whoami'], { env });
  assert.equal(after.code, 1);
  assert.match(after.stderr, /Not logged in/);
});

test('open and console print the URLs; without a display nothing is opened, with one xdg-open hands them to the browser', async () => {
  const noDisplay = await daemon.cli(['open'], { cwd: dir, env: { DISPLAY: '', WAYLAND_DISPLAY: '' } });
  assert.equal(noDisplay.code, 0, noDisplay.stderr);
  assert.equal(noDisplay.stdout, `http://${appId}.localhost:${daemon.routerPort}/\n`);
  assert.match(noDisplay.stderr, /No display here/);

  const consoleUrl = await daemon.cli(['console'], { cwd: dir, env: { DISPLAY: '', WAYLAND_DISPLAY: '' } });
  assert.equal(consoleUrl.code, 0, consoleUrl.stderr);
  assert.equal(consoleUrl.stdout, `${daemon.apiUrl}/#/apps/${appId}\n`);

  // The user's browser, as xdg-open finds it through $BROWSER, records what it was asked to open.
  const bin = mkdtempSync(join(tmpdir(), 'slipway-browser-'));
  const opened = join(bin, 'opened');
  writeFileSync(join(bin, 'browser'), `#!/bin/sh\nprintf '%s\\n' "$1" >> ${opened}\n`);
  chmodSync(join(bin, 'browser'), 0o755);
  // Empty desktop folders, so no installed browser is the default handler and $BROWSER is used.
  const desktop = { XDG_CURRENT_DESKTOP: '', XDG_DATA_DIRS: bin, XDG_DATA_HOME: bin, XDG_CONFIG_DIRS: bin, XDG_CONFIG_HOME: bin };
  const env = { ...desktop, DISPLAY: ':77', BROWSER: join(bin, 'browser') };
  assert.equal((await daemon.cli(['open'], { cwd: dir, env })).code, 0);
  assert.equal((await daemon.cli(['console', '--app', 'hello'], { cwd: dir, env })).code, 0);
  assert.deepEqual(readFileSync(opened, 'utf8').split('\n').filter(Boolean), [
    `http://${appId}.localhost:${daemon.routerPort}/`,
    `${daemon.apiUrl}/#/apps/${appId}`,
  ]);

  // A display but no browser at all: the URL is printed and the command still succeeds.
  const broken = await daemon.cli(['open'], { cwd: dir, env: { DISPLAY: ':77', BROWSER: '/nonexistent/browser', PATH: '/usr/bin:/bin' } });
  assert.equal(broken.code, 0, broken.stderr);
  assert.match(broken.stdout, /^http:\/\//);
  assert.match(broken.stderr, /Could not open a browser: xdg-open exited with \d/);
});

test('link refuses an id or alias already linked; make-default changes the default app', async () => {
  const other = await daemon.cli(['create', '--type', 'node', 'other', '--org', 'default', '--alias', 'second'], { cwd: dir });
  assert.equal(other.code, 0, other.stderr);
  const otherId = other.stdout.trim();

  const sameId = await daemon.cli(['link', appId, '--alias', 'again'], { cwd: dir });
  assert.equal(sameId.code, 1);
  assert.match(sameId.stderr, /already linked here as "hello"/);
  const sameAlias = await daemon.cli(['create', '--type', 'node', 'third', '--org', 'default', '--alias', 'second'], { cwd: dir });
  assert.equal(sameAlias.code, 1);
  assert.match(sameAlias.stderr, /The alias "second" already names other/);
  const apps = JSON.parse((await daemon.cli(['applications', '--format', 'json'])).stdout) as Array<{ name: string }>;
  assert.ok(!apps.some((a) => a.name === 'third'), 'a refused alias creates no application');

  const linkFile = () => JSON.parse(readFileSync(join(dir, '.slipway.json'), 'utf8')) as { default: string };
  assert.equal(linkFile().default, appId);
  const made = await daemon.cli(['make-default', 'second'], { cwd: dir });
  assert.equal(made.code, 0, made.stderr);
  assert.equal(linkFile().default, otherId);
  assert.equal(JSON.parse((await daemon.cli(['status', '--format', 'json'], { cwd: dir })).stdout).app.id, otherId);
  const unknown = await daemon.cli(['make-default', 'nope'], { cwd: dir });
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /Linked here: hello, second/);
  assert.equal((await daemon.cli(['make-default', 'hello'], { cwd: dir })).code, 0);
  // --alias picks a linked app; an alias not linked here is refused with the ones that are.
  assert.equal(JSON.parse((await daemon.cli(['status', '-a', 'second', '--format', 'json'], { cwd: dir })).stdout).app.id, otherId);
  const wrongAlias = await daemon.cli(['env', '--alias', 'nope'], { cwd: dir });
  assert.equal(wrongAlias.code, 1);
  assert.match(wrongAlias.stderr, /Aliases linked in .*: hello, second/);
  assert.equal((await daemon.cli(['delete', '--yes', '--app', otherId])).code, 0);
  assert.equal((await daemon.cli(['unlink', 'second'], { cwd: dir })).code, 0);
});

test('a folder with a .clever.json is linked to the apps it names, explicitly or on first use', async () => {
  const clever = (folder: string) =>
    writeFileSync(
      join(folder, '.clever.json'),
      JSON.stringify({
        apps: [
          {
            app_id: 'app_11111111-2222-3333-4444-555555555555',
            org_id: 'orga_x',
            deploy_url: 'https://push.example.invalid/app.git',
            name: 'hello',
            alias: 'production',
          },
          {
            app_id: 'app_66666666-2222-3333-4444-555555555555',
            org_id: 'orga_x',
            deploy_url: 'https://push.example.invalid/b.git',
            name: 'not-here',
            alias: 'staging',
          },
        ],
      }),
    );
  const explicit = mkdtempSync(join(tmpdir(), 'slipway-clever-'));
  clever(explicit);
  const linked = await daemon.cli(['link', '--from-clever'], { cwd: explicit });
  assert.equal(linked.code, 0, linked.stderr);
  assert.match(linked.stderr, /Linked hello \(app_[^)]+\) as "production"/);
  assert.match(linked.stderr, /Skipped "staging" .*no application of that name among yours/);
  const written = JSON.parse(readFileSync(join(explicit, '.slipway.json'), 'utf8'));
  assert.deepEqual(
    written.apps.map((a: { alias: string; app_id: string }) => [a.alias, a.app_id]),
    [['production', appId]],
  );
  assert.equal(written.default, appId);
  const twice = await daemon.cli(['link', '--from-clever'], { cwd: explicit });
  assert.equal(twice.code, 1);
  assert.match(twice.stderr, /already linked here as "production"/);

  // First use: a command run in a sub-folder of the project finds .clever.json and links it.
  const automatic = mkdtempSync(join(tmpdir(), 'slipway-clever-'));
  clever(automatic);
  execFileSync('mkdir', [join(automatic, 'src')]);
  const status = await daemon.cli(['status', '--alias', 'production', '--format', 'json'], { cwd: join(automatic, 'src') });
  assert.equal(status.code, 0, status.stderr);
  assert.equal(JSON.parse(status.stdout).app.id, appId);
  assert.match(status.stderr, /Linked hello .* from .*\.clever\.json/);
  assert.ok(existsSync(join(automatic, '.slipway.json')));
});

test('addon create accepts the reference provider names and the one plan of each provider', async () => {
  const providers = JSON.parse((await daemon.cli(['addon', 'providers', '--format', 'json'])).stdout) as Array<{
    name: string;
    plans: Array<{ name: string }>;
  }>;
  assert.deepEqual(
    providers.map((p) => [p.name, p.plans.map((plan) => plan.name)]),
    [
      ['postgresql', ['dev']],
      ['redis', ['s_mono']],
      ['fs-bucket', ['1G']],
    ],
  );
  const wrongPlan = await daemon.cli(['addon', 'create', 'postgresql-addon', 'db', '--plan', 'xl_big']);
  assert.equal(wrongPlan.code, 1);
  assert.match(wrongPlan.stderr, /The postgresql provider has no plan "xl_big"/);
  assert.match(wrongPlan.stderr, /It has one plan, dev/);
  const created = await daemon.cli(['addon', 'create', 'redis-addon', 'cache', '--plan', 'S_MONO', '--format', 'json']);
  assert.equal(created.code, 0, created.stderr);
  assert.equal(JSON.parse(created.stdout).provider, 'redis');
  assert.equal((await daemon.cli(['addon', 'delete', 'cache', '--yes'])).code, 0);
});

test('published-config import replaces what the app exposes', async () => {
  assert.equal((await daemon.cli(['published-config', 'set', 'OLD', 'x'], { cwd: dir })).code, 0);
  const imported = await daemon.cli(['published-config', 'import'], { cwd: dir, stdin: 'API_URL=http://api.internal/\nMULTI="a\nb"\n' });
  assert.equal(imported.code, 0, imported.stderr);
  const listed = JSON.parse((await daemon.cli(['published-config', '--format', 'json'], { cwd: dir })).stdout);
  assert.deepEqual(listed, [
    { name: 'API_URL', value: 'http://api.internal/' },
    { name: 'MULTI', value: 'a\nb' },
  ]);
  const json = await daemon.cli(['published-config', 'import', '--json'], {
    cwd: dir,
    stdin: JSON.stringify([{ name: 'ONLY', value: ' spaced ' }]),
  });
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(JSON.parse((await daemon.cli(['published-config', '--format', 'json'], { cwd: dir })).stdout), [
    { name: 'ONLY', value: ' spaced ' },
  ]);
  const bad = await daemon.cli(['published-config', 'import'], { cwd: dir, stdin: '1BAD=x\n' });
  assert.equal(bad.code, 1);
});

test('deploy --tag deploys the tagged commit through --alias; an unknown tag is refused', async () => {
  const missing = await daemon.cli(['deploy', '--tag', 'v9'], { cwd: dir, env: gitEnv });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /The tag v9 does not exist/);
  assert.match(missing.stderr, /git tag v9/);

  const tagged = newRelease(dir, 'tagged');
  execFileSync('git', ['tag', 'v1'], { cwd: dir });
  newRelease(dir, 'after-the-tag');
  const deployed = await daemon.cli(['deploy', '-a', 'hello', '--tag', 'v1'], { cwd: dir, env: gitEnv, timeoutMs: 600_000 });
  assert.equal(deployed.code, 0, deployed.stderr);
  const status = JSON.parse((await daemon.cli(['status', '--format', 'json'], { cwd: dir })).stdout);
  assert.equal(status.release.commit, tagged);
  assert.equal(JSON.parse((await getThroughRouter(daemon, `${appId}.localhost`)).body).release, 'tagged');
});

test('logs: --search, --until and --no-follow; on a terminal it follows by default', async () => {
  const found = await daemon.cli(['logs', '--search', 'release tagged listening'], { cwd: dir });
  assert.equal(found.code, 0, found.stderr);
  assert.deepEqual(found.stdout.split('\n').filter(Boolean), ['release tagged listening on 0.0.0.0:8080']);
  const before = await daemon.cli(['logs', '--until', '2000-01-01T00:00:00Z'], { cwd: dir });
  assert.equal(before.code, 0, before.stderr);
  assert.equal(before.stdout, '');
  const badUntil = await daemon.cli(['logs', '--until', 'tomorrow'], { cwd: dir });
  assert.equal(badUntil.code, 2);
  assert.match(badUntil.stderr, /--until takes a duration/);

  const following = startInTerminal(['logs', '--search', 'crashing']);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(following.child.exitCode, null, `logs on a terminal returned instead of following:\n${following.output()}`);
  await getThroughRouter(daemon, `${appId}.localhost`, '/crash');
  await waitUntil(
    'the crash line followed live',
    async () => (following.output().includes('crashing on purpose') ? true : undefined),
    30_000,
  );
  following.child.kill('SIGTERM');
  await following.exited;

  const once = startInTerminal(['logs', '--no-follow', '--search', 'crashing']);
  assert.equal(await once.exited, 0);
  assert.match(once.output(), /crashing on purpose/);
});

test('deploy --exit-on never follows the application output once the deployment ended', async () => {
  commitAll(dir, 'empty change');
  const run = startCli(['deploy', '--exit-on', 'never']);
  await waitUntil(
    'the deployment to end and the following to begin',
    async () => (run.output().includes('Following the output of hello') ? true : undefined),
    600_000,
  );
  assert.match(run.output(), /Deployment deployment_[0-9a-f-]+ OK/);
  await waitUntil('the app to answer', async () =>
    (await getThroughRouter(daemon, `${appId}.localhost`)).status === 200 ? true : undefined,
  );
  await getThroughRouter(daemon, `${appId}.localhost`, '/crash');
  await waitUntil(
    'the crash line in the followed output',
    async () => (run.output().includes('crashing on purpose') ? true : undefined),
    30_000,
  );
  assert.equal(run.child.exitCode, null, 'deploy --exit-on never is still following');
  run.child.kill('SIGTERM');
  await run.exited;
});
