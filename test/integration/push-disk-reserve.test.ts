/**
 * A push counts against the data disk's free-space reserve while it arrives: on a small ext4
 * data disk of its own (loop-mounted as root), a push that starts above the reserve and would
 * end below it is refused with the reserve's message and leaves nothing; a smaller one passes;
 * once the disk is below the reserve, every push is refused saying so.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { type LoopDisk, makeLoopDisk } from '../support/loop-disk.js';
import { checkoutExample, commitAll, createApp, gitPush, registerSshKey } from '../support/deploy.js';

const needsRoot = process.getuid?.() === 0 ? false : 'a loop-mounted data folder needs root';
const MiB = 1024 * 1024;

let disk: LoopDisk | undefined;
let daemon: TestDaemon | undefined;
let dir: string;
let url: string;
let gitEnv: NodeJS.ProcessEnv;

const freeBytes = () => disk!.freeBytes();

before(async () => {
  if (needsRoot) return;
  disk = makeLoopDisk('slipway-push-reserve', '320M');
  const dataDir = disk.dataDir;
  // The app's budget is larger than what the disk has above the reserve: the reserve is the bound.
  daemon = await startDaemon(['--app-disk-budget', '256M', '--min-free-disk', '200M'], { dataDir });
  ({ gitEnv } = await registerSshKey(daemon));
  dir = checkoutExample('node-hello');
  const appId = await createApp(daemon, dir, 'pusher');
  url = `git+ssh://git@127.0.0.1:${daemon.sshPort}/${appId}.git`;
});

after(async () => {
  if (needsRoot) return;
  try {
    await daemon?.stop();
  } finally {
    disk?.remove();
  }
});

test('a push that would take the data disk below the reserve is refused while it arrives', { skip: needsRoot }, async () => {
  const above = freeBytes() - 200 * MiB;
  assert.ok(above > 16 * MiB && above < 120 * MiB, `the disk has ${above} bytes above the reserve`);
  // Random bytes: git cannot compress them below their size.
  writeFileSync(join(dir, 'large.bin'), randomBytes(above + 24 * MiB));
  commitAll(dir, 'too large for the disk');
  let refused: Awaited<ReturnType<typeof gitPush>>;
  try {
    refused = await gitPush(dir, url, gitEnv);
  } finally {
    execFileSync('git', ['reset', '-q', '--hard', 'HEAD~1'], { cwd: dir });
  }
  assert.notEqual(refused.code, 0, refused.output);
  assert.match(
    refused.output,
    /push refused: it is larger than the [\d.]+ MiB the data folder's disk \(.+\) has free above the reserve of 200 MiB\./,
  );
  assert.match(refused.output, /Free space on that disk .* or start the daemon with a smaller --min-free-disk/);
  const remote = spawnSync('git', ['ls-remote', url, 'refs/heads/master'], { cwd: dir, env: gitEnv, encoding: 'utf8' });
  assert.equal(remote.stdout.trim(), '', `the refused push left no branch: ${remote.stdout}${remote.stderr}`);

  // The same repository without the large file goes through.
  const accepted = await gitPush(dir, url, gitEnv);
  assert.equal(accepted.code, 0, accepted.output);
});

test('below the reserve every push is refused, saying the disk is below it', { skip: needsRoot }, async () => {
  // Another program fills the disk down to half the reserve.
  const filler = join(disk!.mountPoint, 'filler');
  execFileSync('fallocate', ['-l', String(freeBytes() - 100 * MiB), filler]);
  try {
    writeFileSync(join(dir, 'small.txt'), 'small\n');
    commitAll(dir, 'a small change');
    const refused = await gitPush(dir, url, gitEnv);
    assert.notEqual(refused.code, 0, refused.output);
    assert.match(refused.output, /push refused: the data folder's disk \(.+\) has [\d.]+ MiB free, below the reserve of 200 MiB\./);
  } finally {
    rmSync(filler, { force: true });
  }
  const again = await gitPush(dir, url, gitEnv);
  assert.equal(again.code, 0, again.output);
});
