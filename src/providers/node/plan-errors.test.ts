/**
 * Every way a Node plan can fail, and what the message tells the user. Each case builds a
 * small project in a temporary folder and asks the real provider for its plan.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { PlanError } from '../plan.js';
import { planFor, provider } from '../../../test/support/node-provider-fixtures.js';

const made: string[] = [];
after(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

async function project(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'slipway-node-plan-'));
  made.push(dir);
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), content);
  }
  return dir;
}

const START = JSON.stringify({ name: 'x', version: '1.0.0', scripts: { start: 'node server.js' } });

async function planError(files: Record<string, string>, env: Record<string, string> = {}): Promise<PlanError> {
  const dir = await project(files);
  try {
    await planFor(dir, env);
  } catch (error) {
    assert.ok(error instanceof PlanError, `expected a PlanError, got ${String(error)}`);
    return error;
  }
  assert.fail('the plan succeeded but should have failed');
}

describe('node plan errors', () => {
  it('a malformed package.json names the line and column of the problem', async () => {
    const error = await planError({ 'package.json': '{\n  "name": "x",\n  "scripts": { "start": "node s.js", }\n}\n' });
    assert.equal(
      error.message,
      'package.json is not valid JSON: expected a property name after the comma (a trailing comma is not allowed), found a closing brace at line 3, column 38.',
      'the rule and the position, never the text of the line',
    );
    assert.match(error.hint ?? '', /Fix package\.json at line 3, column 38/);
  });

  it('an unterminated string is placed where the line ends', async () => {
    const error = await planError({ 'package.json': '{"name": "x\n}' });
    assert.match(error.message, /line 1, column 12/);
  });

  it('a package.json that is not an object, or has wrongly typed fields, is refused', async () => {
    assert.match((await planError({ 'package.json': '[]' })).message, /must hold a JSON object/);
    assert.match(
      (await planError({ 'package.json': '{"scripts": {"start": 1}}' })).message,
      /"scripts\.start" must be a string, but it is a number/,
    );
    assert.match((await planError({ 'package.json': '{"engines": "node 22"}' })).message, /"engines" must be an object of strings/);
  });

  it('no package.json at all', async () => {
    const error = await planError({ 'server.js': '' });
    assert.match(error.message, /No package\.json at the root of the repository/);
  });

  it('an unknown CC_NODE_BUILD_TOOL lists the valid values', async () => {
    const error = await planError({ 'package.json': START }, { CC_NODE_BUILD_TOOL: 'yarn3' });
    assert.equal(
      error.message,
      'CC_NODE_BUILD_TOOL is "yarn3", which is not a known package manager. Valid values: bun, npm, npm-install, npm-ci, pnpm, yarn-berry, custom (legacy, deprecated: yarn, yarn2).',
    );
  });

  it('custom without CC_CUSTOM_BUILD_TOOL', async () => {
    const error = await planError({ 'package.json': START }, { CC_NODE_BUILD_TOOL: 'custom' });
    assert.match(error.message, /CC_NODE_BUILD_TOOL=custom needs CC_CUSTOM_BUILD_TOOL/);
  });

  it('npm-ci without package-lock.json', async () => {
    const error = await planError({ 'package.json': START }, { CC_NODE_BUILD_TOOL: 'npm-ci' });
    assert.match(error.message, /needs package-lock\.json \(or npm-shrinkwrap\.json\)/);
    assert.match(error.hint ?? '', /commit package-lock\.json, or set CC_NODE_BUILD_TOOL=npm-install/);
  });

  it('no start command says where one is looked for, and names a likely entry file', async () => {
    const error = await planError({ 'package.json': '{"name": "x"}', 'server.js': '' });
    assert.equal(
      error.message,
      'No start command: package.json has no scripts.start and no main, and CC_RUN_COMMAND is not set. ' +
        'slipway looks for a start command in this order: CC_RUN_COMMAND, scripts.start in package.json, main in package.json. ' +
        'The repository has server.js: for example add "scripts": { "start": "node server.js" }.',
    );
  });

  it('an unsatisfiable engines.node names the range and the nearest versions', async () => {
    const error = await planError({ 'package.json': JSON.stringify({ scripts: { start: 'x' }, engines: { node: '>=30' } }) });
    assert.match(error.message, /No available node version matches ">=30"/);
    assert.match(error.message, /below: 25\.2\.0, 24\.12\.0/);
  });

  it('an unknown CC_NODE_VERSION fails the same way', async () => {
    const error = await planError({ 'package.json': START }, { CC_NODE_VERSION: '23' });
    assert.match(error.message, /No available node version matches "23"/);
  });

  it('a bad CC_NODE_DEV_DEPENDENCIES lists install and ignore', async () => {
    const error = await planError({ 'package.json': START }, { CC_NODE_DEV_DEPENDENCIES: 'yes' });
    assert.equal(error.message, 'CC_NODE_DEV_DEPENDENCIES is "yes"; valid values are install and ignore.');
  });

  it('a malformed packageManager field', async () => {
    const error = await planError({ 'package.json': JSON.stringify({ scripts: { start: 'x' }, packageManager: 'yarn' }) });
    assert.match(error.message, /"packageManager" is "yarn", which is not of the form <manager>@<version>/);
  });

  it('CC_NPM_BASIC_AUTH without a colon is refused without showing its value', async () => {
    const error = await planError({ 'package.json': START }, { CC_NPM_BASIC_AUTH: 'onlyasecret' });
    assert.match(error.message, /<user>:<password>/);
    assert.ok(!error.message.includes('onlyasecret') && !(error.hint ?? '').includes('onlyasecret'));
  });

  it('a mise.toml that is not TOML', async () => {
    const error = await planError({ 'package.json': START, 'mise.toml': '[tools\ndeno = "2"' });
    assert.match(error.message, /^mise\.toml is not valid TOML/);
  });

  it('CC_MISE_FILE_PATH outside the repository is refused', async () => {
    const error = await planError({ 'package.json': START }, { CC_MISE_FILE_PATH: '../../etc/mise.toml' });
    assert.match(error.message, /not a path inside the repository/);
  });

  it('detect is true only with a package.json', async () => {
    assert.equal(await provider.detect(await project({ 'package.json': START })), true);
    assert.equal(await provider.detect(await project({ 'build.sbt': '' })), false);
  });
});
