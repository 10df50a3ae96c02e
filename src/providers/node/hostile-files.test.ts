/**
 * A pushed repository is hostile: a file the provider reads may be a link to a file of the
 * machine, a fifo or a folder. The plan refuses it by name, and nothing it read is quoted.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { PlanError } from '../plan.js';
import { planFor, provider } from '../../../test/support/node-provider-fixtures.js';

const SECRET = 'admin-token-8d2e0c41';
const made: string[] = [];
after(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

/** `<base>/admin-token` (the machine's) and `<base>/data/builds/<id>/` (the repository). */
async function layout(files: Record<string, string>, links: Record<string, string> = {}): Promise<{ base: string; repo: string }> {
  const base = await mkdtemp(path.join(tmpdir(), 'slipway-hostile-node-'));
  made.push(base);
  await writeFile(path.join(base, 'admin-token'), `{ "token": ${SECRET} }\n`);
  const repo = path.join(base, 'data', 'builds', 'deployment');
  await mkdir(repo, { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(repo, name)), { recursive: true });
    await writeFile(path.join(repo, name), content);
  }
  for (const [name, target] of Object.entries(links)) await symlink(target, path.join(repo, name));
  return { base, repo };
}

async function refused(repo: string, env: Record<string, string> = {}): Promise<PlanError> {
  try {
    await planFor(repo, env);
  } catch (error) {
    assert.ok(error instanceof PlanError, `expected a PlanError, got ${String(error)}`);
    const said = `${error.message}\n${error.hint ?? ''}`;
    assert.ok(!said.includes(SECRET), `nothing read is quoted: ${said}`);
    assert.ok(!said.includes(tmpdir()), `no path of the machine is named: ${said}`);
    return error;
  }
  assert.fail('the plan succeeded');
}

const START = JSON.stringify({ name: 'x', scripts: { start: 'node server.js' } });

describe('node provider and hostile repositories', () => {
  it('a package.json linked to a file of the machine is refused by name, at detection and at planning', async () => {
    const { repo } = await layout({}, { 'package.json': '../../../admin-token' });
    const error = await refused(repo);
    assert.equal(error.message, 'package.json is a symbolic link to a path outside the repository.');
    assert.match(error.hint ?? '', /Commit the file itself instead of a link/);
    await assert.rejects(provider.detect(repo), /package\.json is a symbolic link to a path outside the repository/);
  });

  it('an .npmrc linked out of the repository is refused before any credential file is written', async () => {
    const { base, repo } = await layout({ 'package.json': START }, { '.npmrc': '../../../admin-token' });
    const error = await refused(repo, { NPM_TOKEN: 'npm_secret_token_value' });
    assert.equal(error.message, '.npmrc is a symbolic link to a path outside the repository.');
    assert.ok(!error.message.includes('npm_secret_token_value'));
    execFileSync('test', ['-f', path.join(base, 'admin-token')]);
  });

  it('an absolute link (.yarnrc.yml -> /etc/...) and a lockfile linked out are refused too', async () => {
    const a = await layout({ 'package.json': START }, { '.yarnrc.yml': '/etc/hostname' });
    assert.match((await refused(a.repo)).message, /^\.yarnrc\.yml is a symbolic link to an absolute path/);
    const b = await layout({ 'package.json': START }, { 'yarn.lock': '../../../admin-token' });
    assert.equal((await refused(b.repo)).message, 'yarn.lock is a symbolic link to a path outside the repository.');
  });

  it('a linked folder on the way to CC_MISE_FILE_PATH is refused, naming the folder', async () => {
    const { repo } = await layout({ 'package.json': START }, { config: '../../..' });
    const error = await refused(repo, { CC_MISE_FILE_PATH: 'config/admin-token' });
    assert.equal(error.message, 'config (on the way to config/admin-token) is a symbolic link to a path outside the repository.');
  });

  it('a package.json that is a fifo is refused without waiting for a writer', async () => {
    const { repo } = await layout({});
    execFileSync('mkfifo', [path.join(repo, 'package.json')]);
    assert.equal(
      (await refused(repo)).message,
      'package.json is a named pipe (fifo) in the repository, where slipway expects a regular file.',
    );
  });

  it('links that stay inside the repository are followed as before', async () => {
    const { repo } = await layout({ 'config/package.json': START, 'server.js': '' }, { 'package.json': 'config/package.json' });
    const plan = await planFor(repo, { NODE_ENV: 'production' });
    assert.equal(plan.start.label, 'start script', JSON.stringify(plan.start));
  });

  it('a broken package.json is placed by line and column, without quoting the line', async () => {
    const { repo } = await layout({ 'package.json': `{\n  "token": ${SECRET}\n}\n` });
    const error = await refused(repo);
    assert.equal(
      error.message,
      'package.json is not valid JSON: expected a value (object, array, string, number, true, false or null), found a letter at line 2, column 12.',
    );
  });
});
