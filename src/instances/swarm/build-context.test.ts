import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createWriteStream, chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { buildContext, relativeToRoot } from './build-context.js';
import { runChecked } from '../../executor/run-captured.js';

const asRoot = process.getuid?.() === 0;

test("a pre-run layer's context leaves out overlayfs' whiteouts, which no build can copy, and keeps every other name", {
  skip: !asRoot && 'needs root (a character device, tar as another user)',
}, async () => {
  const root = mkdtempSync(join(tmpdir(), 'slipway-context-'));
  try {
    chmodSync(root, 0o755);
    const layer = join(root, 'layer');
    mkdirSync(join(layer, 'sub'), { recursive: true });
    writeFileSync(join(layer, 'pre-run.txt'), 'x');
    writeFileSync(join(layer, 'sub', 'odd\nname $(x)'), 'y');
    // What overlayfs leaves in an upper folder for a file removed from the release below.
    await runChecked(['mknod', join(layer, 'removed.js'), 'c', '0', '0'], { env: { PATH: '/usr/bin:/bin' } });
    for (const p of [layer, join(layer, 'sub')]) chmodSync(p, 0o755);
    const context = buildContext('FROM x\n', [layer], { uid: 65534, gid: 65534 }, { withoutWhiteouts: true });
    const file = join(root, 'context.tar');
    await Promise.all([pipeline(context.stream, createWriteStream(file)), context.done]);
    const listing = await runChecked(['tar', '--list', '--file', file], { env: { PATH: '/usr/bin:/bin' } });
    const names = listing.stdout.split('\n').filter(Boolean);
    const rel = relativeToRoot(layer);
    assert.ok(names.includes(`${rel}/pre-run.txt`), names.join('\n'));
    assert.ok(
      names.some((n) => n.startsWith(`${rel}/sub/odd`)),
      'a name with a newline is kept whole',
    );
    assert.ok(!names.some((n) => n.includes('removed.js')), 'the whiteout is left out');
    assert.ok(names.includes(context.dockerfile), names.join('\n'));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
