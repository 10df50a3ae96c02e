import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlanError } from '../core/errors.js';
import { MAX_LINKS, RefusedPathError, UntrustedTree } from './untrusted-tree.js';

const SECRET = 'root-only-secret-4f1c';

/** A machine in a folder: `outside/` holds what root owns, `repo/` what a push controls. */
function machine(): { base: string; outside: string; repo: string; tree: UntrustedTree } {
  const base = mkdtempSync(join(tmpdir(), 'slipway-untrusted-'));
  const outside = join(base, 'outside');
  const repo = join(base, 'repo');
  mkdirSync(join(outside, 'folder'), { recursive: true });
  mkdirSync(repo);
  writeFileSync(join(outside, 'admin-token'), `${SECRET}\n`);
  writeFileSync(join(outside, 'folder', 'kept'), SECRET);
  return { base, outside, repo, tree: new UntrustedTree(repo, { name: 'the repository' }) };
}

async function refusal(work: Promise<unknown>): Promise<RefusedPathError> {
  try {
    await work;
  } catch (error) {
    assert.ok(error instanceof RefusedPathError, `expected a refusal, got ${String(error)}`);
    assert.ok(error instanceof PlanError, 'a refusal is a build failure the user can fix');
    assert.ok(!error.message.includes(SECRET) && !(error.hint ?? '').includes(SECRET), 'nothing read is quoted');
    assert.ok(!error.message.includes(tmpdir()), 'no path of the machine is named');
    return error;
  }
  assert.fail('the path was not refused');
}

test('reads files of the tree, and follows relative links that stay inside it', async () => {
  const { repo, tree } = machine();
  mkdirSync(join(repo, 'config/deep'), { recursive: true });
  writeFileSync(join(repo, 'package.json'), '{"name":"x"}');
  writeFileSync(join(repo, 'config/deep/real.json'), 'inside');
  symlinkSync('config/deep/real.json', join(repo, 'linked.json'));
  symlinkSync('config/deep', join(repo, 'shortcut'));
  symlinkSync('../config/deep/real.json', join(repo, 'config/up.json'));
  assert.equal(await tree.readText('package.json'), '{"name":"x"}');
  assert.equal(await tree.readText('linked.json'), 'inside');
  assert.equal(await tree.readText('shortcut/real.json'), 'inside');
  assert.equal(await tree.readText('config/up.json'), 'inside');
  assert.equal(await tree.readText('config/deep/../deep/real.json'), 'inside');
  assert.deepEqual(await tree.entry('shortcut'), {
    path: 'config/deep',
    kind: 'folder',
    mode: statSync(join(repo, 'config/deep')).mode & 0o7777,
    size: statSync(join(repo, 'config/deep')).size,
  });
  assert.equal(await tree.readText('missing.json'), undefined);
  assert.equal(await tree.readText('package.json/inside-a-file'), undefined, 'a file on the way is like a missing folder');
  symlinkSync('nowhere', join(repo, 'dangling'));
  assert.equal(await tree.readText('dangling'), undefined);
});

test('a link to a file outside the tree is refused, naming the file and saying what to do', async () => {
  const { repo, tree } = machine();
  symlinkSync('../outside/admin-token', join(repo, 'package.json'));
  const error = await refusal(tree.readText('package.json'));
  assert.equal(error.message, 'package.json is a symbolic link to a path outside the repository.');
  assert.match(error.hint ?? '', /Commit the file itself instead of a link.*then push again\./);
  await refusal(tree.isFile('package.json'));
});

test('a link climbing out through `..` components, even after going down first, is refused', async () => {
  const { repo, tree } = machine();
  mkdirSync(join(repo, 'a/b'), { recursive: true });
  symlinkSync('b/../../../outside/admin-token', join(repo, 'a/sneaky'));
  const error = await refusal(tree.readText('a/sneaky'));
  assert.equal(error.message, 'a/sneaky is a symbolic link to a path outside the repository.');
  await refusal(tree.readText('../outside/admin-token'));
  await refusal(tree.readText('a/../../outside/admin-token'));
});

test('an absolute link is refused, even one naming a file of the tree', async () => {
  const { repo, tree } = machine();
  writeFileSync(join(repo, 'real'), 'x');
  symlinkSync('/etc/passwd', join(repo, '.npmrc'));
  symlinkSync(join(repo, 'real'), join(repo, 'inside-but-absolute'));
  assert.match((await refusal(tree.readText('.npmrc'))).message, /^\.npmrc is a symbolic link to an absolute path/);
  await refusal(tree.readText('inside-but-absolute'));
});

test('a folder on the way that is a link out of the tree is refused, naming that folder', async () => {
  const { repo, tree } = machine();
  symlinkSync('../outside', join(repo, 'config'));
  const error = await refusal(tree.readText('config/admin-token'));
  assert.equal(error.message, 'config (on the way to config/admin-token) is a symbolic link to a path outside the repository.');
  await refusal(tree.list('config'));
  await refusal(tree.entry('config/folder/kept'));
});

test('link loops are refused instead of followed forever', async () => {
  const { repo, tree } = machine();
  symlinkSync('b', join(repo, 'a'));
  symlinkSync('a', join(repo, 'b'));
  symlinkSync('self', join(repo, 'self'));
  assert.match((await refusal(tree.readText('a'))).message, new RegExp(`loops \\(more than ${MAX_LINKS} links`));
  await refusal(tree.readText('self/x'));
});

test('a fifo or a folder where a file is expected is refused (and a fifo never blocks the read)', async () => {
  const { repo, tree } = machine();
  execFileSync('mkfifo', [join(repo, 'pipe')]);
  mkdirSync(join(repo, 'package.json'));
  symlinkSync('/dev/zero', join(repo, 'zero'));
  assert.equal(
    (await refusal(tree.readText('pipe'))).message,
    'pipe is a named pipe (fifo) in the repository, where slipway expects a regular file.',
  );
  assert.equal(
    (await refusal(tree.readText('package.json'))).message,
    'package.json is a folder in the repository, where slipway expects a regular file.',
  );
  await refusal(tree.readText('zero'));
});

test('a device file where a file is expected is refused', async (t) => {
  if (process.getuid?.() !== 0) {
    t.skip('making a device file (mknod) needs root; the fifo case above covers the same check');
    return;
  }
  const { repo, tree } = machine();
  execFileSync('mknod', [join(repo, 'package.json'), 'c', '1', '5']);
  assert.equal(
    (await refusal(tree.readText('package.json'))).message,
    'package.json is a device file in the repository, where slipway expects a regular file.',
  );
});

test('a file larger than the limit is refused, or cut at the limit when only its start is wanted', async () => {
  const { repo, tree } = machine();
  writeFileSync(join(repo, 'big.json'), 'x'.repeat(5000));
  const error = await refusal(tree.readText('big.json', { maxBytes: 4096 }));
  assert.equal(error.message, 'big.json is larger than 4 KiB, more than slipway reads from the repository.');
  assert.equal(await tree.readText('big.json', { maxBytes: 100, truncate: true }), 'x'.repeat(100));
});

test('a generated file replaces a link at its name instead of writing through it', async () => {
  const { repo, outside, tree } = machine();
  symlinkSync('../outside/admin-token', join(repo, '.npmrc'));
  symlinkSync('../outside/not-yet', join(repo, '.yarnrc.slipway-build.yml'));
  await tree.writeFile('.npmrc', 'token=1\n', { mode: 0o600 });
  await tree.writeFile('.yarnrc.slipway-build.yml', 'x: 1\n');
  assert.equal(readFileSync(join(outside, 'admin-token'), 'utf8'), `${SECRET}\n`, 'the link target is untouched');
  assert.equal(existsSync(join(outside, 'not-yet')), false, 'nothing is created where a link points');
  assert.ok(lstatSync(join(repo, '.npmrc')).isFile());
  assert.equal(readFileSync(join(repo, '.npmrc'), 'utf8'), 'token=1\n');
  assert.equal(lstatSync(join(repo, '.npmrc')).mode & 0o777, 0o600);
  assert.deepEqual(readdirSync(repo).sort(), ['.npmrc', '.yarnrc.slipway-build.yml'], 'no temporary file is left');
});

test('a generated file replaces a fifo, refuses a folder, and never writes through a linked parent', async () => {
  const { repo, outside, tree } = machine();
  execFileSync('mkfifo', [join(repo, '.npmrc')]);
  await tree.writeFile('.npmrc', 'a=1\n');
  assert.ok(lstatSync(join(repo, '.npmrc')).isFile());

  mkdirSync(join(repo, '.yarnrc.slipway-build.yml'));
  const error = await refusal(tree.writeFile('.yarnrc.slipway-build.yml', 'x'));
  assert.equal(error.message, '.yarnrc.slipway-build.yml is a folder in the repository, where slipway writes a file it generates.');

  symlinkSync('../outside/folder', join(repo, 'sub'));
  await refusal(tree.writeFile('sub/kept', 'overwritten'));
  assert.equal(readFileSync(join(outside, 'folder', 'kept'), 'utf8'), SECRET);
  writeFileSync(join(repo, 'plain'), '');
  assert.match(
    (await refusal(tree.writeFile('plain/x', 'y'))).message,
    /^plain \(on the way to plain\/x\) is a file in the repository, where slipway needs a folder/,
  );

  await tree.writeFile('new/deeper/file', 'made');
  assert.equal(readFileSync(join(repo, 'new/deeper/file'), 'utf8'), 'made');
});

test('remove unlinks a link (never its target) and removes folders without following links inside', async () => {
  const { repo, outside, tree } = machine();
  symlinkSync('../outside/folder', join(repo, 'node_modules'));
  assert.equal(await tree.remove('node_modules'), true);
  assert.equal(existsSync(join(repo, 'node_modules')), false);
  assert.equal(readFileSync(join(outside, 'folder', 'kept'), 'utf8'), SECRET);

  mkdirSync(join(repo, 'dir'));
  symlinkSync('../../outside/folder', join(repo, 'dir', 'escape'));
  assert.equal(await tree.remove('dir'), true);
  assert.equal(readFileSync(join(outside, 'folder', 'kept'), 'utf8'), SECRET);

  symlinkSync('../outside', join(repo, 'up'));
  await refusal(tree.remove('up/folder'));
  assert.equal(existsSync(join(outside, 'folder', 'kept')), true);
  assert.equal(await tree.remove('not-there'), false);
});

test('folders move and copy between two trees; a link at either end moves nothing out of place', async () => {
  const { base, repo, outside, tree } = machine();
  const cacheRoot = join(base, 'cache');
  mkdirSync(cacheRoot);
  const cache = new UntrustedTree(cacheRoot, { name: "the app's cache folder" });
  mkdirSync(join(repo, '.slipway-cache/npm'), { recursive: true });
  writeFileSync(join(repo, '.slipway-cache/npm/index'), 'cached');
  assert.equal(await tree.moveFolderTo('.slipway-cache/npm', cache, 'dirs/.slipway-cache/npm'), true);
  assert.equal(readFileSync(join(cacheRoot, 'dirs/.slipway-cache/npm/index'), 'utf8'), 'cached');
  assert.equal(existsSync(join(repo, '.slipway-cache/npm')), false);

  mkdirSync(join(repo, 'node_modules/.bin'), { recursive: true });
  writeFileSync(join(repo, 'node_modules/dep.js'), 'dep');
  symlinkSync('../dep.js', join(repo, 'node_modules/.bin/dep'));
  symlinkSync('../../outside/admin-token', join(repo, 'node_modules/escape'));
  assert.equal(await tree.copyFolderTo('node_modules', cache, 'dirs/node_modules'), true);
  assert.equal(readlinkSync(join(cacheRoot, 'dirs/node_modules/.bin/dep')), '../dep.js', 'links are copied as links');
  assert.ok(
    lstatSync(join(cacheRoot, 'dirs/node_modules/escape')).isSymbolicLink(),
    'a link out is copied as a link, not as the file it names',
  );

  // A linked source is not a folder of the tree: nothing moves, the folder it names stays.
  symlinkSync('../outside/folder', join(repo, 'linked'));
  assert.equal(await tree.moveFolderTo('linked', cache, 'dirs/linked'), false);
  assert.equal(await tree.copyFolderTo('linked', cache, 'dirs/linked'), false);
  assert.equal(readFileSync(join(outside, 'folder', 'kept'), 'utf8'), SECRET);
  assert.equal(existsSync(join(cacheRoot, 'dirs/linked')), false);

  // A linked folder on the target's way is refused before anything moves.
  symlinkSync('../outside', join(cacheRoot, 'evil'));
  mkdirSync(join(repo, 'some'));
  await refusal(tree.moveFolderTo('some', cache, 'evil/folder'));
  assert.equal(readFileSync(join(outside, 'folder', 'kept'), 'utf8'), SECRET);
  assert.ok(existsSync(join(repo, 'some')));
});

test('a folder lists its entries as they are, links included, without following them', async () => {
  const { repo, tree } = machine();
  mkdirSync(join(repo, 'bin'));
  writeFileSync(join(repo, 'bin/app'), '');
  symlinkSync('../../outside/admin-token', join(repo, 'bin/escape'));
  mkdirSync(join(repo, 'bin/sub'));
  assert.deepEqual(await tree.list('bin'), [
    { name: 'app', kind: 'file' },
    { name: 'escape', kind: 'symlink' },
    { name: 'sub', kind: 'folder' },
  ]);
  assert.deepEqual(await tree.list('missing'), []);
  const gone = new UntrustedTree(join(repo, 'not-made-yet'), { name: "the app's releases folder" });
  assert.deepEqual(await gone.list(''), [], 'a root not made yet has no entries');
  await assert.rejects(gone.makeFolder('x'), /does not exist/);
});
