/**
 * Private npm registries through the real product: a real daemon, git push over SSH,
 * real builds with npm, pnpm, Bun and Yarn berry against a private registry started here on
 * a host of the test's own (builds reach it as any outside host, never the machine's loopback),
 * the app checked over HTTP through the router.
 * Credentials must reach the package manager and nothing else: not the deployment log, not
 * `slipway activity`, not the release folder the instance runs from.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, commitAll, createApp, deploymentLog, getThroughRouter, pushAndWait, registerSshKey } from '../support/deploy.js';
import { startPrivateRegistry, REFUSAL, type PrivateRegistry } from '../support/private-registry.js';
import { filesHoldingAny } from '../support/files-holding.js';

const TOKEN = 'npm_SlipwayTestToken0123456789abcdef';
const USER = 'deployer';
const PASSWORD = 'S3cret-Registry-Password';
const BASIC = `${USER}:${PASSWORD}`;
const SECRETS = [TOKEN, PASSWORD, Buffer.from(BASIC).toString('base64')];

let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let registry: PrivateRegistry;

before(async () => {
  // The private server lives on a private network (test/support/remote-host.ts): opened to the
  // builds as an operator would open theirs.
  daemon = await startDaemon(['--egress-allow', '10.253.0.0/16']);
  ({ gitEnv } = await registerSshKey(daemon));
  registry = await startPrivateRegistry({ token: TOKEN, basic: BASIC });
});

after(async () => {
  await daemon?.stop();
  await registry?.close();
});

interface Deployed {
  appId: string;
  deploymentId: string;
  state: string;
  log: string[];
}

let appCount = 0;

/**
 * The project's own .npmrc: its scope goes to the private registry (CC_NPM_REGISTRY only says
 * where the credentials go), plus a setting of its own, to see the file is kept as committed.
 */
const projectNpmrc = (): string => `@slipway-test:registry=${registry.url}/\nfund=false\n`;

/** Creates an app from node-private-registry (with its .npmrc, plus extra files), sets its variables, pushes it. */
async function deploy(env: Record<string, string>, extraFiles: Record<string, string> = {}): Promise<Deployed> {
  const dir = checkoutExample('node-private-registry');
  for (const [file, content] of Object.entries({ '.npmrc': projectNpmrc(), ...extraFiles })) writeFileSync(join(dir, file), content);
  commitAll(dir, 'variant');
  const appId = await createApp(daemon, dir, `private-registry-${++appCount}`, { CC_NPM_REGISTRY: registry.url, ...env });
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  return { appId, deploymentId: result.id, state: result.state, log: await deploymentLog(daemon, appId, result.id) };
}

/**
 * The data folder as far as this app's build may have written to it: everything but the other
 * apps' filesystem images (sparse files of their whole budget, which grep reads to the last
 * zero; each was searched by the test of its own app), with this app's image.
 */
function dataFolderOf(appId: string): string[] {
  const others = readdirSync(daemon.dataDir)
    .filter((name) => name !== 'disks')
    .map((name) => join(daemon.dataDir, name));
  const image = join(daemon.dataDir, 'disks', `${appId}.img`);
  assert.ok(existsSync(image), `the app's filesystem image ${image} exists`);
  return [...others, image];
}

/** No credential in the deployment log, in `slipway activity` (text and JSON), or in the release. */
async function assertNoSecretLeft(deployed: Deployed, secrets: string[]): Promise<void> {
  const activity = await daemon.cli(['activity', '--app', deployed.appId]);
  const activityJson = await daemon.cli(['activity', '--app', deployed.appId, '--format', 'json']);
  const releaseDir = join(daemon.dataDir, 'apps', deployed.appId, 'releases', deployed.deploymentId);
  for (const secret of secrets) {
    assert.ok(!deployed.log.join('\n').includes(secret), `the deployment log shows a credential:\n${deployed.log.join('\n')}`);
    assert.ok(!`${activity.stdout}${activity.stderr}${activityJson.stdout}`.includes(secret), 'slipway activity shows a credential');
  }
  if (existsSync(releaseDir)) assert.deepEqual(filesHoldingAny(releaseDir, secrets), [], 'a file of the release holds a credential');
  const elsewhere = filesHoldingAny(dataFolderOf(deployed.appId), secrets).filter(
    (path) =>
      !/\.(db|sqlite)(-wal|-shm|-journal)?$/.test(path) &&
      !path.startsWith(join(daemon.dataDir, 'runc') + '/') &&
      !path.startsWith(join(daemon.dataDir, 'sandboxes') + '/') &&
      !path.startsWith(join(daemon.dataDir, 'instances') + '/'),
  );
  assert.deepEqual(elsewhere, [], 'a file of the data folder holds a credential');
  if (existsSync(releaseDir)) {
    assert.equal(existsSync(join(releaseDir, '.slipway-cache/config/.npmrc')), false, 'the credentials file is not in the release');
    assert.equal(existsSync(join(releaseDir, '.yarnrc.slipway-build.yml')), false, 'the Yarn berry credentials file is not in the release');
  }
}

/**
 * The running app reports the private package and the public one it required, that no
 * credentials file is beside it, and that the project's own .npmrc is there as committed.
 */
async function assertServesPrivatePackage(deployed: Deployed): Promise<Record<string, unknown>> {
  assert.equal(deployed.state, 'OK', deployed.log.join('\n'));
  const response = await getThroughRouter(daemon, `${deployed.appId}.localhost`);
  assert.equal(response.status, 200, response.body);
  const facts = JSON.parse(response.body) as Record<string, unknown>;
  assert.equal(facts.secretGreeting, 'hello from the private registry');
  assert.equal(facts.publicDependency, true, 'the public dependency came from the default registry');
  assert.equal(facts.credentialsFilePresent, false, 'the instance finds no credentials file in its folder');
  assert.equal(facts.yarnBuildRcPresent, false);
  assert.deepEqual(facts.projectNpmrc, projectNpmrc().trim().split('\n'), "the project's .npmrc is there at run time, as committed");
  return facts;
}

// Yarn berry refuses plain-http registries unless listed (the test registry is plain http),
// and takes the scope's registry from its own settings.
const berryFiles = (): Record<string, string> => ({
  '.yarnrc.yml': `unsafeHttpWhitelist:\n  - ${registry.host}\nnodeLinker: node-modules\nnpmScopes:\n  slipway-test:\n    npmRegistryServer: "${registry.url}"\n`,
});

for (const [label, env, files] of [
  ['npm with NPM_TOKEN', { NPM_TOKEN: TOKEN }, {}],
  ['npm with CC_NPM_BASIC_AUTH', { CC_NPM_BASIC_AUTH: BASIC }, {}],
  ['pnpm with NPM_TOKEN', { CC_NODE_BUILD_TOOL: 'pnpm', NPM_TOKEN: TOKEN }, {}],
  ['pnpm with CC_NPM_BASIC_AUTH', { CC_NODE_BUILD_TOOL: 'pnpm', CC_NPM_BASIC_AUTH: BASIC }, {}],
  ['bun with NPM_TOKEN', { CC_NODE_BUILD_TOOL: 'bun', NPM_TOKEN: TOKEN }, {}],
  ['bun with CC_NPM_BASIC_AUTH', { CC_NODE_BUILD_TOOL: 'bun', CC_NPM_BASIC_AUTH: BASIC }, {}],
  ['yarn-berry with NPM_TOKEN', { CC_NODE_BUILD_TOOL: 'yarn-berry', NPM_TOKEN: TOKEN }, 'berry'],
  ['yarn-berry with CC_NPM_BASIC_AUTH', { CC_NODE_BUILD_TOOL: 'yarn-berry', CC_NPM_BASIC_AUTH: BASIC }, 'berry'],
] as const) {
  test(`${label}: the private package installs, the app serves it, no credential is left or logged`, async () => {
    const seenBefore = registry.seen.length;
    const deployed = await deploy(env, files === 'berry' ? berryFiles() : files);
    await assertServesPrivatePackage(deployed);
    const seen = registry.seen.slice(seenBefore);
    assert.ok(
      seen.some((line) => line.endsWith('authorized')),
      `the registry saw no authorized request:\n${seen.join('\n')}`,
    );
    assert.ok(!seen.some((line) => line.endsWith('bad-credentials')), seen.join('\n'));
    assert.ok(
      seen.every((line) => line.includes('@slipway-test')),
      `the private registry was asked for public packages:\n${seen.join('\n')}`,
    );
    const file = env.CC_NODE_BUILD_TOOL === 'yarn-berry' ? '.yarnrc.slipway-build.yml' : '.slipway-cache/config/.npmrc';
    assert.ok(deployed.log.includes(`Wrote ${file} (secret: removed before the release starts)`), deployed.log.join('\n'));
    await assertNoSecretLeft(deployed, SECRETS);
  });
}

test('a wrong token fails the build with the registry answer in the log, and the wrong token is not shown', async () => {
  const wrong = 'npm_WrongTokenForTheTestRegistry42';
  const deployed = await deploy({ NPM_TOKEN: wrong });
  assert.equal(deployed.state, 'FAIL', deployed.log.join('\n'));
  const log = deployed.log.join('\n');
  assert.match(log, /npm error code E401/, log);
  assert.ok(
    deployed.log.some((line) => line.includes('401 Unauthorized') && line.includes('@slipway-test') && line.includes(REFUSAL)),
    `the registry's answer is visible:\n${log}`,
  );
  assert.ok(
    deployed.log.some((line) => line.startsWith('==> [build] Build failed')),
    log,
  );
  await assertNoSecretLeft(deployed, [...SECRETS, wrong]);
  const activity = await daemon.cli(['activity', '--app', deployed.appId]);
  assert.match(activity.stdout, /FAIL/);
});
