import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';

/** The autoscaler's settings an app has until it overrides them. */
const DEFAULT_AUTOSCALING = 'cpu-out=80,cpu-in=30,inflight-out=0,mem-out=90,mem-in=50,out-after=6s,in-after=1m,cooldown=10s,idle-after=15m';

let daemon: TestDaemon;
let project: string;
let appId: string;

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const LISTING = 'pico (256 MiB), nano (512 MiB), XS (1 GiB), S (2 GiB), M (4 GiB), L (8 GiB), XL (16 GiB)';

async function api(
  method: string,
  path: string,
  body?: unknown,
  token = daemon.adminToken,
): Promise<{ status: number; json: any; text: string }> {
  const response = await fetch(`${daemon.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined, text };
}

async function scaleJson(): Promise<Record<string, unknown>> {
  const shown = await daemon.cli(['scale', '--format', 'json'], { cwd: project });
  assert.equal(shown.code, 0, shown.stderr);
  return JSON.parse(shown.stdout);
}

before(async () => {
  daemon = await startDaemon();
  project = mkdtempSync(join(tmpdir(), 'slipway-scale-'));
  const created = await daemon.cli(['create', '--type', 'node', 'sized', '--region', 'par', '--org', 'default'], { cwd: project });
  assert.equal(created.code, 0, created.stderr);
  appId = created.stdout.trim();
});

after(async () => {
  await daemon?.stop();
});

test('a new app shows the default flavours in scale, status and the API', async () => {
  assert.deepEqual(await scaleJson(), {
    instances: 1,
    flavor: 'nano',
    memory_bytes: 512 * MiB,
    build_flavor: 'S',
    build_memory_bytes: 2 * GiB,
    disk_budget_bytes: 2 * GiB,
    min_instances: 1,
    max_instances: 1,
    min_flavor: 'nano',
    max_flavor: 'nano',
    autoscaling: DEFAULT_AUTOSCALING,
    asleep_since: null,
    workers: null,
    decisions: [],
  });
  const human = await daemon.cli(['scale'], { cwd: project });
  assert.match(human.stdout, /^flavor\s+nano \(512 MiB\)$/m);
  assert.match(human.stdout, /^build flavor\s+S \(2 GiB\)$/m);
  assert.equal(human.stderr, '', 'showing the scaling says nothing about when a change applies');
  const status = await daemon.cli(['status'], { cwd: project });
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /^flavor\s+nano \(512 MiB\)$/m);
  assert.match(status.stdout, /^build flavor\s+S \(2 GiB\)$/m);
  const { status: code, json } = await api('GET', `/v1/apps/${appId}`);
  assert.equal(code, 200);
  assert.equal(json.app.flavor, 'nano');
  assert.equal(json.app.flavor_memory_bytes, 512 * MiB);
  assert.equal(json.app.build_flavor, 'S');
  assert.equal(json.app.build_flavor_memory_bytes, 2 * GiB);
});

test('scale sets both flavours in any case, prints them canonical and says when they apply; status shows them', async () => {
  const set = await daemon.cli(['scale', '--flavor', 'Pico', '--build-flavor', 'xs'], { cwd: project });
  assert.equal(set.code, 0, set.stderr);
  assert.match(set.stdout, /^flavor\s+pico \(256 MiB\)$/m);
  assert.match(set.stdout, /^build flavor\s+XS \(1 GiB\)$/m);
  assert.match(set.stderr, /instance flavour applies at the next deployment or `slipway restart`/);
  assert.match(set.stderr, /build flavour applies at the next build/);

  const status = await daemon.cli(['status', '--app', appId]);
  assert.match(status.stdout, /^flavor\s+pico \(256 MiB\)$/m);
  assert.match(status.stdout, /^build flavor\s+XS \(1 GiB\)$/m);
  const statusJson = JSON.parse((await daemon.cli(['status', '--app', appId, '--format', 'json'])).stdout);
  assert.equal(statusJson.app.flavor, 'pico');
  assert.equal(statusJson.app.build_flavor, 'XS');

  const onlyBuild = await daemon.cli(['scale', '--build-flavor', 'M', '--format', 'json'], { cwd: project });
  assert.equal(onlyBuild.code, 0, onlyBuild.stderr);
  assert.deepEqual(JSON.parse(onlyBuild.stdout), {
    instances: 1,
    flavor: 'pico',
    memory_bytes: 256 * MiB,
    build_flavor: 'M',
    build_memory_bytes: 4 * GiB,
    disk_budget_bytes: 2 * GiB,
    min_instances: 1,
    max_instances: 1,
    min_flavor: 'pico',
    max_flavor: 'pico',
    autoscaling: DEFAULT_AUTOSCALING,
    asleep_since: null,
    workers: null,
    decisions: [],
  });
  assert.doesNotMatch(onlyBuild.stderr, /instance flavour/, 'only the flavour that changed is mentioned');
  assert.match(onlyBuild.stderr, /build flavour applies at the next build/);
});

test('the API sets flavours through PUT /v1/apps/:app/scale and lists the route', async () => {
  const put = await api('PUT', `/v1/apps/${appId}/scale`, { flavor: 'xl', buildFlavor: 'nAnO' });
  assert.equal(put.status, 200, put.text);
  assert.deepEqual(put.json.scale, {
    instances: 1,
    flavor: 'XL',
    memory_bytes: 16 * GiB,
    build_flavor: 'nano',
    build_memory_bytes: 512 * MiB,
    disk_budget_bytes: 2 * GiB,
    min_instances: 1,
    max_instances: 1,
    min_flavor: 'XL',
    max_flavor: 'XL',
    autoscaling: DEFAULT_AUTOSCALING,
    asleep_since: null,
    workers: null,
    decisions: [],
  });
  const got = await api('GET', `/v1/apps/${appId}/scale`);
  assert.deepEqual(got.json.scale, put.json.scale);
  assert.equal((await api('GET', `/v1/apps/${appId}`)).json.app.flavor, 'XL');

  const doc = (await api('GET', '/v1/openapi.json')).json as { paths: Record<string, Record<string, { summary: string }>> };
  assert.match(
    doc.paths['/v1/apps/{app}/scale']!.put!.summary,
    /"flavor"\?, "buildFlavor"\?.*pico, nano, XS, S, M, L, XL.*next deployment or restart/,
  );
  assert.match(doc.paths['/v1/apps/{app}/scale']!.get!.summary, /flavours/);
});

test('unknown flavours and fields are refused with what is accepted, and change nothing', async () => {
  const before = await scaleJson();
  const bad = await daemon.cli(['scale', '--flavor', 'huge', '--build-flavor', 'S'], { cwd: project });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /Unknown flavour "huge"/);
  assert.ok(bad.stderr.includes(LISTING), bad.stderr);
  const badBuild = await daemon.cli(['scale', '--build-flavor', 'XXL'], { cwd: project });
  assert.equal(badBuild.code, 1);
  assert.match(badBuild.stderr, /Unknown flavour "XXL"/);
  assert.ok(badBuild.stderr.includes(LISTING), badBuild.stderr);

  const viaApi = await api('PUT', `/v1/apps/${appId}/scale`, { flavor: 'nano', buildFlavor: 'tiny' });
  assert.equal(viaApi.status, 400);
  assert.equal(viaApi.json.error.message, 'Unknown flavour "tiny".');
  assert.equal(viaApi.json.error.hint, `Flavours: ${LISTING}.`);
  const misspelt = await api('PUT', `/v1/apps/${appId}/scale`, { flavour: 'S' });
  assert.equal(misspelt.status, 400);
  assert.match(misspelt.json.error.message, /Unknown field "flavour"/);
  assert.match(misspelt.json.error.hint, /flavor, buildFlavor, instances/);
  const empty = await api('PUT', `/v1/apps/${appId}/scale`, {});
  assert.equal(empty.status, 400);
  assert.match(empty.json.error.message, /Nothing to change/);

  assert.deepEqual(await scaleJson(), before, 'a refused change leaves both flavours as they were');
});

test("another organisation's app answers 404 to scale and leaks nothing", async () => {
  const created = await daemon.cli(['user', 'create', 'mallory', '--format', 'json']);
  assert.equal(created.code, 0, created.stderr);
  const token = JSON.parse(created.stdout).token as string;
  const before = await scaleJson();

  for (const [method, body] of [
    ['GET', undefined],
    ['PUT', { flavor: 'pico' }],
    ['PUT', { flavor: 'no-such' }],
  ] as const) {
    const r = await api(method, `/v1/apps/${appId}/scale`, body, token);
    assert.equal(r.status, 404, `${method} ${JSON.stringify(body)}: ${r.text}`);
    assert.doesNotMatch(r.text, /sized|XL|nano|default/);
  }
  assert.equal((await api('GET', `/v1/apps/${appId}`, undefined, token)).status, 404);
  const viaCli = await daemon.cli(['scale', '--app', appId, '--flavor', 'pico'], { token });
  assert.equal(viaCli.code, 1);
  assert.match(viaCli.stderr, /No application/);

  assert.deepEqual(await scaleJson(), before, "the other organisation's attempts changed nothing");
});

test('the help says what flavours exist and when a change applies', async () => {
  const help = await daemon.cli(['scale', '--help']);
  assert.equal(help.code, 0, help.stderr);
  const text = help.stdout + help.stderr;
  assert.ok(text.includes(LISTING), text);
  assert.match(text, /--flavor name[\s\S]*next deployment or `slipway restart`/);
  assert.match(text, /--build-flavor name[\s\S]*next build/);
  assert.match(text, /With no option, prints the current scaling/);
});
