/**
 * A pushed sbt project is hostile: build.sbt, project/build.properties or a plugins file may be a
 * link to a file of the machine, and the app's cache (written by its builds) may hold links
 * where sbt's folders go. The provider refuses the first by name without quoting anything, and
 * root never creates or deletes through the second.
 */
import assert from 'node:assert/strict';
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { PlanError, type PlanContext } from '../plan.js';
import { prepareSbtCacheFolders } from './prepare.js';
import { sbtProvider } from './sbt-provider.js';

const SECRET = 'sbt.version=9.9.9-admin-token-51ac';
const made: string[] = [];
after(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

async function layout(files: Record<string, string>, links: Record<string, string> = {}): Promise<{ base: string; repo: string }> {
  const base = await mkdtemp(path.join(tmpdir(), 'slipway-hostile-sbt-'));
  made.push(base);
  await writeFile(path.join(base, 'admin-token'), `${SECRET}\n`);
  await mkdir(path.join(base, 'root-folder', 'tmp'), { recursive: true });
  await writeFile(path.join(base, 'root-folder', 'tmp', 'kept'), SECRET);
  const repo = path.join(base, 'data', 'builds', 'deployment');
  await mkdir(repo, { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(repo, name)), { recursive: true });
    await writeFile(path.join(repo, name), content);
  }
  for (const [name, target] of Object.entries(links)) {
    await mkdir(path.dirname(path.join(repo, name)), { recursive: true });
    await symlink(target, path.join(repo, name));
  }
  return { base, repo };
}

function context(sourceDir: string): PlanContext {
  return { sourceDir, appType: 'sbt', env: {}, catalog: { versions: async () => [] } };
}

async function refused(work: Promise<unknown>): Promise<PlanError> {
  try {
    await work;
  } catch (error) {
    assert.ok(error instanceof PlanError, `expected a PlanError, got ${String(error)}`);
    const said = `${error.message}\n${error.hint ?? ''}`;
    assert.ok(!said.includes('admin-token-51ac'), `nothing read is quoted: ${said}`);
    assert.ok(!said.includes(tmpdir()), `no path of the machine is named: ${said}`);
    return error;
  }
  assert.fail('not refused');
}

describe('sbt provider and hostile repositories', () => {
  it('a build.sbt linked to a file of the machine is refused by name at detection', async () => {
    const { repo } = await layout({}, { 'build.sbt': '../../../admin-token' });
    const error = await refused(sbtProvider.detect(repo));
    assert.equal(error.message, 'build.sbt is a symbolic link to a path outside the repository.');
    assert.match(error.hint ?? '', /Commit the file itself instead of a link/);
  });

  it('a project/build.properties linked out is refused instead of read for sbt.version', async () => {
    const { repo } = await layout({ 'build.sbt': '' }, { 'project/build.properties': '../../../../admin-token' });
    const error = await refused(sbtProvider.plan(context(repo)));
    assert.equal(error.message, 'project/build.properties is a symbolic link to a path outside the repository.');
  });

  it('a linked project folder or plugins file leading out is refused, naming it', async () => {
    const a = await layout({ 'build.sbt': '' }, { project: '../../..' });
    assert.equal(
      (await refused(sbtProvider.plan(context(a.repo)))).message,
      'project (on the way to project/build.properties) is a symbolic link to a path outside the repository.',
    );
    const b = await layout(
      { 'build.sbt': '', 'project/build.properties': 'sbt.version=1.10.7\n' },
      { 'project/plugins.sbt': '/etc/hostname' },
    );
    assert.match(
      (await refused(sbtProvider.plan(context(b.repo)))).message,
      /^project\/plugins\.sbt is a symbolic link to an absolute path/,
    );
  });

  it("links in the app's cache where sbt's folders go are removed, never followed", async () => {
    const { base } = await layout({});
    const cache = path.join(base, 'data', 'cache', 'apps', 'app');
    await mkdir(cache, { recursive: true });
    await symlink('../../../../root-folder', path.join(cache, 'sbt'));
    const logged: string[] = [];
    await prepareSbtCacheFolders(cache, (line) => logged.push(line));
    assert.equal(readFileSync(path.join(base, 'root-folder', 'tmp', 'kept'), 'utf8'), SECRET, 'the folder the link named keeps its files');
    assert.equal(existsSync(path.join(base, 'root-folder', 'boot')), false, 'nothing is made where the link pointed');
    assert.ok(lstatSync(path.join(cache, 'sbt')).isDirectory() && lstatSync(path.join(cache, 'sbt', 'boot')).isDirectory());
    assert.match(
      logged.join('\n'),
      /sbt's caches are rebuilt from scratch: sbt \(on the way to sbt\/tmp\) is a symbolic link to a path outside the app's cache folder/,
    );

    await rm(path.join(cache, 'sbt', 'ivy'), { recursive: true });
    await symlink('/', path.join(cache, 'sbt', 'ivy'));
    await prepareSbtCacheFolders(cache);
    assert.ok(lstatSync(path.join(cache, 'sbt', 'ivy')).isDirectory(), 'the link was replaced by a folder of the cache');
  });
});
