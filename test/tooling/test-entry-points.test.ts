/**
 * Every test entry point builds before it tests: the integration tests run the CLI and the daemon
 * from dist/, so a run that only type-checked would test whatever was compiled last. Checked on a
 * small project that holds slipway's own runner, package.json scripts and configuration, and one
 * test that compares the compiled module with its source.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));
let project: string;

/** The test inside the project: the compiled src/value.ts must say what the source says now. */
const FRESHNESS_TEST = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

test('the compiled module is the current source', async () => {
  const source = readFileSync(new URL('./value.ts', import.meta.url), 'utf8');
  const compiled = new URL('../dist/src/value.js', import.meta.url).href;
  const { value } = await import(compiled);
  assert.equal(source, \`export const value = '\${value}';\\n\`);
  // The CLI runs from its bundle (scripts/bundle-cli.mjs), which must be as current.
  const cli = await import(new URL('../dist/src/cli/main.bundle.js', import.meta.url).href);
  assert.equal(await cli.main(), value);
});
`;

const setValue = (value: string) => writeFileSync(join(project, 'src/value.ts'), `export const value = '${value}';\n`);

function run(command: string, args: string[]): { code: number | null; output: string } {
  // Without the outer runner's variable, node --test inside runs its files instead of reporting to this one.
  // Without CI: the parts check under CI needs the suite's support files, which this small
  // project does not hold, and is not what these tests are about.
  const { NODE_TEST_CONTEXT: _outer, CI: _ci, ...env } = process.env;
  // A temporary folder of its own: the inner runner fails on test daemon folders that appear in
  // it during its run, and the outer suite's other lanes start daemons in the machine's meanwhile.
  const result = spawnSync(command, args, {
    cwd: project,
    env: { ...env, TMPDIR: join(project, 'tmp') },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

before(() => {
  project = mkdtempSync(join(tmpdir(), 'slipway-entry-points-'));
  for (const file of [
    'package.json',
    'tsconfig.console.json',
    'biome.jsonc',
    'scripts/run-tests.mjs',
    'scripts/run-record-reporter.mjs',
    'scripts/unit-shard.mjs',
    'scripts/test-lanes.mjs',
    'scripts/bundle-cli.mjs',
  ]) {
    mkdirSync(join(project, file, '..'), { recursive: true });
    copyFileSync(join(repo, file), join(project, file));
  }
  symlinkSync(join(repo, 'node_modules'), join(project, 'node_modules'));
  // Through a linked node_modules tsc no longer finds @types/node by itself: named here.
  const tsconfig = JSON.parse(readFileSync(join(repo, 'tsconfig.json'), 'utf8'));
  tsconfig.compilerOptions.types = ['node'];
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
  mkdirSync(join(project, 'src/console/browser'), { recursive: true });
  mkdirSync(join(project, 'test'));
  mkdirSync(join(project, 'tmp'));
  writeFileSync(join(project, 'src/console/browser/page.ts'), 'export const page = 1;\n');
  writeFileSync(join(project, 'src/value.test.ts'), FRESHNESS_TEST);
  // A CLI in the shape scripts/bundle-cli.mjs bundles: main.js, and the errors module it keeps apart.
  mkdirSync(join(project, 'src/cli'));
  writeFileSync(join(project, 'src/cli/errors.ts'), 'export class CliError extends Error {}\n');
  writeFileSync(
    join(project, 'src/cli/main.ts'),
    "import { value } from '../value.js';\nimport { CliError } from './errors.js';\nexport async function main(): Promise<string> {\n  return new CliError(value).message;\n}\n",
  );
  // Biome reads .gitignore through git, as in the real tree.
  writeFileSync(join(project, '.gitignore'), 'node_modules\ndist\ntmp\n');
  assert.equal(run('git', ['init', '-q']).code, 0);
});

after(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

test('the freshness test fails when dist/ was built from an older source (positive control)', () => {
  setValue('old');
  assert.equal(run(process.execPath, [join(repo, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json']).code, 0);
  setValue('edited');
  const stale = run(process.execPath, ['--import', 'tsx', '--test', 'src/value.test.ts']);
  assert.notEqual(stale.code, 0, stale.output);
  assert.match(stale.output, /'old'/);
});

test('node scripts/run-tests.mjs builds before the tests', () => {
  setValue('runner');
  const result = run(process.execPath, ['scripts/run-tests.mjs', 'value']);
  assert.equal(result.code, 0, result.output);
  assert.match(result.output, /the compiled module is the current source/);
});

test('npm run test:unit builds before the tests', () => {
  setValue('unit');
  const result = run('npm', ['run', 'test:unit']);
  assert.equal(result.code, 0, result.output);
  assert.match(result.output, /the compiled module is the current source/);
});

test('npm test builds before the tests', () => {
  setValue('whole');
  const result = run('npm', ['test', '--', 'value']);
  assert.equal(result.code, 0, result.output);
  assert.match(result.output, /the compiled module is the current source/);
});
