import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { startDaemon, type TestDaemon } from '../support/daemon.js';

let daemon: TestDaemon;
let project: string;

before(async () => {
  daemon = await startDaemon();
  project = mkdtempSync(join(tmpdir(), 'slipway-project-'));
});

after(async () => {
  await daemon?.stop();
});

test('first start writes a private admin token and prints where it is and how to log in, never the token', () => {
  const tokenFile = join(daemon.dataDir, 'admin-token');
  assert.equal(statSync(tokenFile).mode & 0o777, 0o600);
  assert.ok(!daemon.output().includes(daemon.adminToken), 'the token itself is not in the daemon output (journald keeps it)');
  assert.ok(daemon.output().includes(`admin token written to ${tokenFile} (mode 0600); read it with: sudo cat ${tokenFile}`));
  assert.ok(daemon.output().includes(`slipway login --url ${daemon.apiUrl} --token "$(sudo cat ${tokenFile})"`));
});

test('login saves the URL and token in the config folder', async () => {
  const configHome = mkdtempSync(join(tmpdir(), 'slipway-cfg-'));
  const result = await daemon.cli(['login', '--url', daemon.apiUrl, '--token', daemon.adminToken], {
    env: { XDG_CONFIG_HOME: configHome, SLIPWAY_URL: '', SLIPWAY_TOKEN: '' },
  });
  assert.equal(result.code, 0, result.stderr);
  const saved = JSON.parse(readFileSync(join(configHome, 'slipway', 'config.json'), 'utf8'));
  assert.deepEqual(saved, { url: daemon.apiUrl, token: daemon.adminToken });
  const list = await daemon.cli(['org', 'list', '--format', 'json'], {
    env: { XDG_CONFIG_HOME: configHome, SLIPWAY_URL: '', SLIPWAY_TOKEN: '' },
  });
  assert.equal(list.code, 0, list.stderr);
  assert.deepEqual(
    JSON.parse(list.stdout).map((o: { name: string }) => o.name),
    ['default'],
  );
});

test('a wrong token is refused with a hint to log in', async () => {
  const result = await daemon.cli(['org', 'list'], { token: 'slw_not-a-token' });
  assert.equal(result.code, 1);
  assert.match(result.stderr, /Missing or invalid API token/);
  assert.match(result.stderr, /slipway login/);
});

test('create (SPEC §4.1) makes an app, links the folder and prints the git URL', async () => {
  await daemon.cli(['org', 'create', 'acme']);
  // Flags in any order, as SPEC's example shows them around the positional name.
  const result = await daemon.cli(['create', '--region', 'mtl', 'shop', '--org', 'acme', '--type', 'node'], { cwd: project });
  assert.equal(result.code, 0, result.stderr);
  const appId = result.stdout.trim();
  assert.match(appId, /^app_[0-9a-f-]{36}$/);
  assert.match(result.stderr, new RegExp(`git\\+ssh://git@localhost:${daemon.sshPort}/${appId}\\.git`));
  const link = JSON.parse(readFileSync(join(project, '.slipway.json'), 'utf8'));
  assert.equal(link.default, appId);
  assert.equal(link.apps[0].alias, 'shop');
  assert.equal(link.apps[0].git_ssh_url, `git+ssh://git@localhost:${daemon.sshPort}/${appId}.git`);

  const json = await daemon.cli(['applications', '--format', 'json']);
  const app = JSON.parse(json.stdout).find((a: { id: string }) => a.id === appId);
  assert.equal(app.region, 'mtl');
  assert.equal(app.type, 'node');
  assert.equal(app.domain, `${appId}.localhost`);
});

test('create refuses a bad region, a bad type and an unknown org, saying what is accepted', async () => {
  const region = await daemon.cli(['create', '--type', 'node', 'x1', '--region', 'nyc', '--org', 'acme'], { cwd: project });
  assert.equal(region.code, 1);
  assert.match(region.stderr, /Unknown region "nyc"/);
  assert.match(region.stderr, /par \(Paris\), mtl \(Montreal\)/);

  const type = await daemon.cli(['create', '--type', 'php', 'x2', '--region', 'par', '--org', 'acme'], { cwd: project });
  assert.equal(type.code, 1);
  assert.match(type.stderr, /Valid types: node \(Node\.js or Bun\), sbt \(Scala or Java built with sbt\)/);

  const org = await daemon.cli(['create', '--type', 'node', 'x3', '--region', 'par', '--org', 'nope'], { cwd: project });
  assert.equal(org.code, 1);
  assert.match(org.stderr, /No organisation "nope"/);

  const usage = await daemon.cli(['create', 'x4', '--bogus'], { cwd: project });
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /Usage: slipway create/);
});

test('env set / env / env rm work in the linked folder, with multi-line values', async () => {
  assert.equal((await daemon.cli(['env', 'set', 'GREETING', 'hello world'], { cwd: project })).code, 0);
  assert.equal((await daemon.cli(['env', 'set', 'PEM', 'line one\nline two'], { cwd: project })).code, 0);
  const list = await daemon.cli(['env', '--format', 'json'], { cwd: project });
  const own = JSON.parse(list.stdout)[0].env;
  assert.deepEqual(own, [
    { name: 'GREETING', value: 'hello world' },
    { name: 'PEM', value: 'line one\nline two' },
  ]);
  assert.equal((await daemon.cli(['env', 'rm', 'PEM'], { cwd: project })).code, 0);
  const human = await daemon.cli(['env'], { cwd: project });
  assert.match(human.stdout, /^GREETING="hello world"$/m);
  assert.doesNotMatch(human.stdout, /PEM/);
});

test('env set refuses bad names and keeps what was there', async () => {
  for (const bad of ['1ABC', 'A-B', 'A B', 'X;rm']) {
    const result = await daemon.cli(['env', 'set', bad, 'v'], { cwd: project });
    assert.equal(result.code, 1, bad);
    assert.match(result.stderr, /Invalid variable name/);
    assert.match(result.stderr, /letters, digits and `_`/);
  }
  const list = await daemon.cli(['env', '--format', 'json'], { cwd: project });
  assert.deepEqual(
    JSON.parse(list.stdout)[0].env.map((v: { name: string }) => v.name),
    ['GREETING'],
  );
});

test('sbt apps also accept "-" and "." in variable names', async () => {
  const created = await daemon.cli(['create', '--type', 'sbt', 'jvm', '--region', 'par', '--org', 'acme', '--alias', 'jvm'], {
    cwd: project,
  });
  assert.equal(created.code, 0, created.stderr);
  const result = await daemon.cli(['env', 'set', 'my.setting-one', 'x', '--app', 'jvm'], { cwd: project });
  assert.equal(result.code, 0, result.stderr);
});

test('env import replaces all variables, with quoted multi-line values or JSON', async () => {
  const text = 'A=1\n# comment\nB="first\nsecond"\n';
  const result = await daemon.cli(['env', 'import', '--app', 'shop'], { cwd: project, stdin: text });
  assert.equal(result.code, 0, result.stderr);
  let env = JSON.parse((await daemon.cli(['env', '--format', 'json', '--app', 'shop'], { cwd: project })).stdout)[0].env;
  assert.deepEqual(env, [
    { name: 'A', value: '1' },
    { name: 'B', value: 'first\nsecond' },
  ]);
  const json = JSON.stringify([{ name: 'ONLY', value: 'x' }]);
  assert.equal((await daemon.cli(['env', 'import', '--json', '--app', 'shop'], { cwd: project, stdin: json })).code, 0);
  env = JSON.parse((await daemon.cli(['env', '--format', 'json', '--app', 'shop'], { cwd: project })).stdout)[0].env;
  assert.deepEqual(env, [{ name: 'ONLY', value: 'x' }]);

  const bad = await daemon.cli(['env', 'import', '--json', '--app', 'shop'], {
    cwd: project,
    stdin: JSON.stringify([{ name: '9X', value: 'y' }]),
  });
  assert.equal(bad.code, 1);
  env = JSON.parse((await daemon.cli(['env', '--format', 'json', '--app', 'shop'], { cwd: project })).stdout)[0].env;
  assert.deepEqual(env, [{ name: 'ONLY', value: 'x' }], 'a refused import changes nothing');
});

test('slipway env > file; slipway env import < file gives back every value exactly, and --format shell sources to them', async () => {
  const values: Record<string, string> = {
    QUOTES: 'say "hi" and \'bye\'',
    BACKSLASHES: 'C:\\path\\to\\ and \\"escaped\\"',
    TRAILING: 'ends with \\',
    TABS: 'a\tb\t',
    LINES: 'first\nsecond\n',
    SHELLISH: '$HOME `id` $(id) #x',
    EMPTY: '',
  };
  const created = await daemon.cli(['create', '--type', 'node', 'vars', '--region', 'par', '--org', 'acme', '--alias', 'vars'], {
    cwd: project,
  });
  assert.equal(created.code, 0, created.stderr);
  for (const [name, value] of Object.entries(values)) {
    const set = await daemon.cli(['env', 'set', name, value, '--app', 'vars'], { cwd: project });
    assert.equal(set.code, 0, set.stderr);
  }
  const own = async () =>
    JSON.parse((await daemon.cli(['env', '--format', 'json', '--app', 'vars'], { cwd: project })).stdout)[0].env as Array<{
      name: string;
      value: string;
    }>;
  const before = await own();
  assert.deepEqual(Object.fromEntries(before.map((v) => [v.name, v.value])), values);

  const saved = await daemon.cli(['env', '--app', 'vars'], { cwd: project });
  assert.equal(saved.code, 0, saved.stderr);
  assert.match(saved.stdout, /^QUOTES="say \\"hi\\" and 'bye'"$/m);
  const imported = await daemon.cli(['env', 'import', '--app', 'vars'], { cwd: project, stdin: saved.stdout });
  assert.equal(imported.code, 0, imported.stderr);
  assert.deepEqual(await own(), before);
  const json = await daemon.cli(['env', '--format', 'json', '--app', 'vars'], { cwd: project });
  assert.equal((await daemon.cli(['env', 'import', '--json', '--app', 'vars'], { cwd: project, stdin: json.stdout })).code, 0);
  assert.deepEqual(await own(), before);

  const shell = await daemon.cli(['env', '--format', 'shell', '--app', 'vars'], { cwd: project });
  const sourced = execFileSync('sh', ['-c', `${shell.stdout}\nnode -e 'process.stdout.write(JSON.stringify(process.env))'`], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH },
  });
  const seen = JSON.parse(sourced) as Record<string, string>;
  for (const { name, value } of before) assert.equal(seen[name], value, name);
});

test('env set and env import refuse a health check path that is not a path, before any build', async () => {
  const set = await daemon.cli(['env', 'set', 'CC_HEALTH_CHECK_PATH', 'health', '--app', 'vars'], { cwd: project });
  assert.equal(set.code, 1);
  assert.match(set.stderr, /CC_HEALTH_CHECK_PATH is "health", which is not a path; nothing was changed/);
  assert.match(set.stderr, /starts with "\/" and has no spaces or control characters/);
  const imported = await daemon.cli(['env', 'import', '--app', 'vars'], {
    cwd: project,
    stdin: 'CC_HEALTH_CHECK_PATH_0="/ok"\nCC_HEALTH_CHECK_PATH_1="/a b"\n',
  });
  assert.equal(imported.code, 1);
  assert.match(imported.stderr, /CC_HEALTH_CHECK_PATH_1 is "\/a b", which is not a path/);
  const env = JSON.parse((await daemon.cli(['env', '--format', 'json', '--app', 'vars'], { cwd: project })).stdout)[0].env as Array<{
    name: string;
  }>;
  assert.equal(
    env.some((v) => v.name.startsWith('CC_HEALTH_CHECK_PATH')),
    false,
  );
});

test("another organisation's app answers 404 and leaks nothing", async () => {
  const created = await daemon.cli(['user', 'create', 'mallory', '--format', 'json']);
  assert.equal(created.code, 0, created.stderr);
  const token = JSON.parse(created.stdout).token as string;
  const link = JSON.parse(readFileSync(join(project, '.slipway.json'), 'utf8'));
  const appId = link.default as string;

  const response = await fetch(`${daemon.apiUrl}/v1/apps/${appId}/env`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(response.status, 404);
  const body = await response.text();
  assert.doesNotMatch(body, /ONLY|shop|acme/);

  const viaCli = await daemon.cli(['env', 'set', 'X', 'y', '--app', appId], { token });
  assert.equal(viaCli.code, 1);
  assert.match(viaCli.stderr, /No application/);
  const apps = await daemon.cli(['applications', '--format', 'json'], { token });
  assert.deepEqual(JSON.parse(apps.stdout), []);
  const orgs = await daemon.cli(['create', '--type', 'node', 'steal', '--region', 'par', '--org', 'acme'], {
    token,
    cwd: mkdtempSync(join(tmpdir(), 'm-')),
  });
  assert.equal(orgs.code, 1);
  assert.match(orgs.stderr, /No organisation "acme"/);
});

test('link, unlink and --app by alias', async () => {
  const other = mkdtempSync(join(tmpdir(), 'slipway-other-'));
  const linked = await daemon.cli(['link', 'shop', '--alias', 'prod'], { cwd: other });
  assert.equal(linked.code, 0, linked.stderr);
  const nested = join(other, 'sub', 'dir');
  mkdirSync(nested, { recursive: true });
  const env = await daemon.cli(['env', '--format', 'json'], { cwd: nested });
  assert.equal(env.code, 0, env.stderr);
  assert.equal((await daemon.cli(['unlink', 'prod'], { cwd: other })).code, 0);
  const after = await daemon.cli(['env'], { cwd: other });
  assert.equal(after.code, 1);
  assert.match(after.stderr, /No application is linked/);
});

test('ssh-keys add / list / rm', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-keys-'));
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'dev@laptop', '-f', join(dir, 'id')]);
  const added = await daemon.cli(['ssh-keys', 'add', join(dir, 'id.pub'), '--format', 'json']);
  assert.equal(added.code, 0, added.stderr);
  const key = JSON.parse(added.stdout);
  const expected = execFileSync('ssh-keygen', ['-lf', join(dir, 'id.pub')], { encoding: 'utf8' }).split(' ')[1];
  assert.equal(key.fingerprint, expected);
  const again = await daemon.cli(['ssh-keys', 'add', join(dir, 'id.pub')]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /already registered/);
  writeFileSync(join(dir, 'junk.pub'), 'not a key');
  const junk = await daemon.cli(['ssh-keys', 'add', join(dir, 'junk.pub')]);
  assert.equal(junk.code, 1);
  assert.match(junk.stderr, /Not an OpenSSH public key/);
  const priv = await daemon.cli(['ssh-keys', 'add', join(dir, 'id')]);
  assert.equal(priv.code, 1);
  assert.match(priv.stderr, /private key/);
  const list = JSON.parse((await daemon.cli(['ssh-keys', 'list', '--format', 'json'])).stdout);
  assert.equal(list.length, 1);
  assert.equal((await daemon.cli(['ssh-keys', 'rm', key.id])).code, 0);
  assert.deepEqual(JSON.parse((await daemon.cli(['ssh-keys', 'list', '--format', 'json'])).stdout), []);
});

test('the daemon serves an OpenAPI document of its endpoints', async () => {
  const doc = (await (await fetch(`${daemon.apiUrl}/v1/openapi.json`)).json()) as { openapi: string; paths: Record<string, unknown> };
  assert.match(doc.openapi, /^3\./);
  assert.ok(doc.paths['/v1/apps/{app}/env/{name}']);
  assert.ok(doc.paths['/v1/orgs']);
});

test('a second daemon on the same data folder refuses to start', async () => {
  const { runCli } = await import('../support/cli.js');
  const result = await runCli(['server', '--data-dir', daemon.dataDir, '--api-port', '0', '--ssh-port', '0', '--router-port', '0']);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /Another slipway daemon \(pid \d+\) is already running on the data folder/);
});

test('SIGTERM stops the daemon cleanly and the data survives a restart', async () => {
  assert.equal(await daemon.terminate(), 0);
  await daemon.restart();
  const env = JSON.parse((await daemon.cli(['env', '--format', 'json', '--app', 'shop'], { cwd: project })).stdout)[0].env;
  assert.deepEqual(env, [{ name: 'ONLY', value: 'x' }]);
});

test('a value starting with "-" is taken as the value by env set, and where it is read as an option it is not echoed back', async () => {
  const secret = '-----BEGIN OPENSSH PRIVATE KEY-----\nsecretmaterial\n-----END OPENSSH PRIVATE KEY-----';
  const set = await daemon.cli(['env', 'set', 'CC_SSH_PRIVATE_KEY', secret, '--app', 'shop']);
  assert.equal(set.code, 0, set.stderr);
  assert.doesNotMatch(set.stderr, /secretmaterial/);
  const env = JSON.parse((await daemon.cli(['env', '--format', 'json', '--app', 'shop'])).stdout)[0].env as Array<{
    name: string;
    value: string;
  }>;
  assert.equal(env.find((v) => v.name === 'CC_SSH_PRIVATE_KEY')?.value, secret);
  // A command whose arguments are not values reads it as an option: refused, and never quoted.
  const refused = await daemon.cli(['ssh-keys', 'add', secret]);
  assert.equal(refused.code, 2);
  assert.doesNotMatch(refused.stderr, /secretmaterial/);
  assert.match(refused.stderr, /Put -- before values/);
});
