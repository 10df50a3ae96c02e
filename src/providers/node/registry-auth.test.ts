/**
 * Private registry credentials: the generated files, the project's own settings left as they
 * are, and that no credential reaches anything that is printed.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { describePlan } from '../describe-plan.js';
import type { BuildPlan, PlanCommand, PlanFile } from '../plan.js';
import { BERRY_BUILD_RC, CREDENTIALS_NPMRC, registryFrom } from './registry-auth.js';
import { planFor, TEST_DEFAULT_REGISTRY } from '../../../test/support/node-provider-fixtures.js';

const TOKEN = 'npm_SECRETtoken0123456789';
const BASIC = 'deploy-user:pa55:word!';
const BASIC_B64 = Buffer.from(BASIC).toString('base64');

const made: string[] = [];
after(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

async function project(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'slipway-node-registry-'));
  made.push(dir);
  for (const [name, content] of Object.entries(files)) await writeFile(path.join(dir, name), content);
  return dir;
}

const PKG = JSON.stringify({ name: 'x', scripts: { start: 'node s.js' } });

/** Everything of a plan that is printed or handed to processes as plain data. */
/** The one file the plan writes: the registry credentials. */
function credentialsFile(plan: BuildPlan): PlanFile {
  assert.equal(plan.files.length, 1, 'the plan writes one file, the credentials');
  return plan.files[0]!; // length checked above
}

/** The install command, the plan's first build step. */
function installStep(plan: BuildPlan): PlanCommand {
  const step = plan.build[0];
  assert.ok(step, 'the plan has an install step');
  return step;
}

function printedParts(plan: BuildPlan): string {
  return (
    JSON.stringify({ ...plan, files: plan.files.map((f) => ({ ...f, content: f.secret ? '' : f.content })) }) +
    describePlan(plan).join('\n')
  );
}

describe('registry credentials', () => {
  it('NPM_TOKEN alone targets the default registry read from npm configuration (here: the test option)', async () => {
    const dir = await project({ 'package.json': PKG });
    const plan = await planFor(dir, { NPM_TOKEN: TOKEN });
    assert.deepEqual(
      plan.files.map((f) => [f.path, f.secret]),
      [[CREDENTIALS_NPMRC, true]],
    );
    const host = new URL(TEST_DEFAULT_REGISTRY).host;
    assert.match(credentialsFile(plan).content, new RegExp(`^registry=https://${host}/$`, 'm'));
    assert.ok(credentialsFile(plan).content.includes(`//${host}/:_authToken=${TOKEN}\n`));
    assert.equal(installStep(plan).env?.npm_config_userconfig, path.join(dir, CREDENTIALS_NPMRC));
    assert.equal(installStep(plan).env?.npm_config_registry, `https://${host}/`);
  });

  it('npm_config_registry in the environment is the default registry, as for npm itself', async () => {
    const plan = await planFor(await project({ 'package.json': PKG }), { NPM_TOKEN: TOKEN, npm_config_registry: 'http://127.0.0.1:4873/' });
    assert.ok(credentialsFile(plan).content.includes(`//127.0.0.1:4873/:_authToken=${TOKEN}\n`));
    assert.match(credentialsFile(plan).content, /^registry=http:\/\/127\.0\.0\.1:4873\/$/m);
  });

  it("the project's .npmrc is left as committed: the credentials go to a file of their own, for the host only", async () => {
    const projectNpmrc = 'registry=https://mirror.invalid/\n@acme:registry=https://packages.acme.invalid/\nengine-strict=true';
    for (const buildTool of ['npm', 'pnpm', 'yarn', 'bun', 'custom']) {
      const dir = await project({ 'package.json': PKG, '.npmrc': projectNpmrc });
      const plan = await planFor(dir, {
        CC_NPM_BASIC_AUTH: BASIC,
        CC_NPM_REGISTRY: 'packages.acme.invalid',
        CC_NODE_BUILD_TOOL: buildTool,
        CC_CUSTOM_BUILD_TOOL: 'npm ci',
      });
      assert.deepEqual(
        plan.files,
        [
          {
            path: CREDENTIALS_NPMRC,
            secret: true,
            content: `# Registry credentials added by slipway for the build; removed before the app starts.\n//packages.acme.invalid/:_auth=${BASIC_B64}\n`,
          },
        ],
        buildTool,
      );
      const env = installStep(plan).env ?? {};
      if (buildTool !== 'bun') assert.equal(env.npm_config_userconfig, path.join(dir, CREDENTIALS_NPMRC), buildTool);
      if (buildTool === 'bun' || buildTool === 'custom')
        assert.equal(env.XDG_CONFIG_HOME, path.dirname(path.join(dir, CREDENTIALS_NPMRC)), buildTool);
      assert.equal(env.npm_config_registry, undefined, `${buildTool}: CC_NPM_REGISTRY does not become the registry of every package`);
      assert.deepEqual(
        plan.warnings.filter((w) => w.includes('CC_NPM_REGISTRY')),
        [],
        buildTool,
      );
    }
  });

  it('CC_NPM_REGISTRY that no registry setting of the project names: a warning says how to route a scope there', async () => {
    const plan = await planFor(await project({ 'package.json': PKG, '.npmrc': 'engine-strict=true\n' }), {
      NPM_TOKEN: TOKEN,
      CC_NPM_REGISTRY: 'packages.acme.invalid',
    });
    assert.ok(!credentialsFile(plan).content.includes('registry='), credentialsFile(plan).content);
    assert.ok(
      plan.warnings.includes(
        "CC_NPM_REGISTRY says where the credentials go (//packages.acme.invalid/), not where packages come from, and no registry setting of the project's .npmrc names that host: " +
          'every package is asked of the default registry. Add `@your-scope:registry=https://packages.acme.invalid/` to .npmrc for the scope that registry holds, commit and push.',
      ),
      plan.warnings.join('\n'),
    );
  });

  it('Yarn berry gets the credentials in a build-only copy of .yarnrc.yml, without making CC_NPM_REGISTRY the server of every package', async () => {
    const dir = await project({
      'package.json': JSON.stringify({ name: 'x', scripts: { start: 'node s.js' }, packageManager: 'yarn@4.9.4' }),
      'yarn.lock': '__metadata:\n  version: 8\n',
      '.yarnrc.yml':
        'nodeLinker: node-modules\nyarnPath: .yarn/releases/yarn-4.9.4.cjs\nnpmScopes:\n  acme:\n    npmRegistryServer: "https://registry.acme.invalid:8443"\n',
    });
    const plan = await planFor(dir, { NPM_TOKEN: TOKEN, CC_NPM_BASIC_AUTH: BASIC, CC_NPM_REGISTRY: 'registry.acme.invalid:8443' });
    assert.deepEqual(
      plan.files.map((f) => [f.path, f.secret]),
      [[BERRY_BUILD_RC, true]],
    );
    assert.deepEqual(parseYaml(credentialsFile(plan).content), {
      nodeLinker: 'node-modules',
      yarnPath: '.yarn/releases/yarn-4.9.4.cjs',
      npmScopes: { acme: { npmRegistryServer: 'https://registry.acme.invalid:8443' } },
      npmRegistries: { '//registry.acme.invalid:8443': { npmAlwaysAuth: true, npmAuthToken: TOKEN, npmAuthIdent: BASIC } },
    });
    assert.equal(installStep(plan).env?.YARN_RC_FILENAME, BERRY_BUILD_RC);
    assert.deepEqual(
      plan.warnings.filter((w) => w.includes('CC_NPM_REGISTRY')),
      [],
    );
  });

  it('no credential appears in env, commands, notes, warnings or the printed plan', async () => {
    for (const buildTool of ['npm', 'pnpm', 'yarn-berry', 'bun', 'yarn']) {
      const plan = await planFor(await project({ 'package.json': PKG }), {
        NPM_TOKEN: TOKEN,
        CC_NPM_BASIC_AUTH: BASIC,
        CC_NODE_BUILD_TOOL: buildTool,
      });
      const printed = printedParts(plan);
      for (const secret of [TOKEN, BASIC, BASIC_B64, 'pa55:word']) assert.ok(!printed.includes(secret), `${buildTool}: ${secret} leaked`);
      assert.ok(
        describePlan(plan).some((line) =>
          /(\.slipway-cache\/config\/\.npmrc|\.yarnrc\.slipway-build\.yml) \(secret: content not shown/.test(line),
        ),
        buildTool,
      );
    }
  });

  it('a line break in a credential is refused (it could write its own .npmrc lines)', async () => {
    await assert.rejects(
      planFor(await project({ 'package.json': PKG }), { NPM_TOKEN: 'abc\nregistry=https://evil.invalid/' }),
      /NPM_TOKEN contains a line break/,
    );
  });

  it('CC_NPM_REGISTRY alone writes nothing', async () => {
    const plan = await planFor(await project({ 'package.json': PKG }), { CC_NPM_REGISTRY: 'registry.acme.invalid' });
    assert.deepEqual(plan.files, []);
  });

  it('registry hosts: bare host, host:port, path, or a full URL', () => {
    assert.deepEqual(registryFrom('registry.acme.invalid', 'X'), {
      url: 'https://registry.acme.invalid/',
      authKey: '//registry.acme.invalid/',
    });
    assert.deepEqual(registryFrom('nexus.acme.invalid:8081/repository/npm', 'X'), {
      url: 'https://nexus.acme.invalid:8081/repository/npm/',
      authKey: '//nexus.acme.invalid:8081/repository/npm/',
    });
    assert.deepEqual(registryFrom('http://127.0.0.1:4873', 'X'), { url: 'http://127.0.0.1:4873/', authKey: '//127.0.0.1:4873/' });
    assert.throws(() => registryFrom('bad host', 'CC_NPM_REGISTRY'), /CC_NPM_REGISTRY is "bad host", which is not a registry host/);
    assert.throws(() => registryFrom('user:pw@host.invalid', 'CC_NPM_REGISTRY'), /must be a plain host/);
  });
});
