/**
 * The build plan of every example app, as data and as the deploy log prints it, compared with
 * the snapshot files in test/snapshots/plans/: any change in what the platform would run for an
 * example shows up as a difference in review. After a deliberate change, update them all with
 *
 *   npm run snapshots:update
 *
 * and read the diff before committing it: the run names each snapshot it wrote, updated or removed,
 * checks that each plan comes out the same when made twice, and fails under CI=true (CI compares,
 * it never writes). Plans are made with the fixed version catalog of the
 * tests; the JDK of an sbt plan is the machine's, so its home and version are written as
 * <JAVA_HOME> and <java version>.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { catalog, EXAMPLES_DIR, provider as nodeProvider } from '../../test/support/node-provider-fixtures.js';
import { describePlan } from './describe-plan.js';
import type { BuildPlan, Provider } from './plan.js';
import { sbtProvider } from './sbt/sbt-provider.js';

const SNAPSHOTS = fileURLToPath(new URL('../../test/snapshots/plans/', import.meta.url));
const UPDATE = process.env.SLIPWAY_UPDATE_SNAPSHOTS === '1';
const CI = !['', '0', 'false'].includes(process.env.CI ?? '');

/** Update mode is for a developer's checkout: a CI run that wrote its own snapshots would prove nothing. */
function assertMayUpdate(): void {
  assert.ok(!CI, `SLIPWAY_UPDATE_SNAPSHOTS=1 with CI=${process.env.CI}: CI compares the plan snapshots and never writes them. Unset it.`);
}

interface ExampleCase {
  /** `node-npm`, `node-dev-deps.2` (the example's second variant). */
  name: string;
  dir: string;
  provider: Provider;
  env: Record<string, string>;
}

/**
 * Values an example.json leaves to its test (`<host:port of the test registry>`): fixed ones here,
 * so the plan is the same on every machine.
 */
const FILLED_IN: Record<string, string> = { NPM_TOKEN: 'token-of-the-snapshots', CC_NPM_REGISTRY: 'registry.invalid:4873' };

function fillIn(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([name, value]) => [name, /^<.*>$/.test(value) ? (FILLED_IN[name] ?? 'x') : value]));
}

/** Every example app (packages used as dependencies by other examples are not apps), with each variant. */
function exampleCases(): ExampleCase[] {
  return readdirSync(EXAMPLES_DIR)
    .sort()
    .flatMap((name): ExampleCase[] => {
      const dir = join(EXAMPLES_DIR, name);
      const provider = existsSync(join(dir, 'build.sbt'))
        ? sbtProvider
        : existsSync(join(dir, 'package.json')) && !name.endsWith('-package')
          ? nodeProvider
          : undefined;
      if (!provider) return [];
      const metaFile = join(dir, 'example.json');
      const meta = existsSync(metaFile)
        ? (JSON.parse(readFileSync(metaFile, 'utf8')) as {
            env?: Record<string, string>;
            variants?: Array<{ env: Record<string, string> }>;
          })
        : {};
      return [
        { name, dir, provider, env: fillIn(meta.env ?? {}) },
        ...(meta.variants ?? []).map((variant, i) => ({ name: `${name}.${i}`, dir, provider, env: fillIn(variant.env) })),
      ];
    });
}

/** The plan with what depends on the machine or the checkout rather than on the example written as a name. */
function machineFree(plan: BuildPlan, text: string, dir: string): string {
  let out = text.split(dir).join('<repository>');
  const javaHome = plan.env.JAVA_HOME;
  const java = plan.toolchain.find((t) => t.name === 'java');
  if (javaHome) out = out.split(javaHome).join('<JAVA_HOME>');
  const javaVersion = /^Java \d+ \(([^,]+),/m.exec(plan.notes.join('\n'))?.[1];
  if (javaVersion) out = out.split(javaVersion).join('<java version>');
  if (java) out = out.split(`"version": "${java.version}"`).join('"version": "<java major>"');
  return out;
}

/** Compares a plan with its snapshot, or in update mode writes it and says so. */
function checkSnapshot(t: TestContext, file: string, actual: string): void {
  const path = join(SNAPSHOTS, file);
  if (UPDATE) {
    assertMayUpdate();
    const before = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
    if (before === actual) return;
    mkdirSync(SNAPSHOTS, { recursive: true });
    writeFileSync(path, actual);
    t.diagnostic(`${before === undefined ? 'wrote' : 'updated'} test/snapshots/plans/${file}: review the diff before committing it`);
    return;
  }
  assert.ok(existsSync(path), `No snapshot ${file}: run \`npm run snapshots:update\` and review the new file.`);
  assert.equal(
    actual,
    readFileSync(path, 'utf8'),
    `${file} differs: if the change is meant, run \`npm run snapshots:update\` and review the diff.`,
  );
}

const cases = exampleCases();

test('every example app has plan snapshots, and no snapshot is left without its example', (t) => {
  assert.ok(cases.length >= 20, `only ${cases.length} examples found in ${EXAMPLES_DIR}`);
  const expected = new Set(cases.flatMap((c) => [`${c.name}.json`, `${c.name}.txt`]));
  const stale = existsSync(SNAPSHOTS) ? readdirSync(SNAPSHOTS).filter((f) => !expected.has(f)) : [];
  if (UPDATE) {
    assertMayUpdate();
    for (const file of stale) {
      rmSync(join(SNAPSHOTS, file));
      t.diagnostic(`removed test/snapshots/plans/${file}: its example is gone`);
    }
    return;
  }
  assert.deepEqual(stale, [], 'remove these snapshots (their example is gone) or run `npm run snapshots:update`');
});

for (const c of cases) {
  test(`plan of ${c.name}`, async (t) => {
    const makePlan = () => c.provider.plan({ sourceDir: c.dir, appType: c.provider.name, env: c.env, catalog });
    const plan = await makePlan();
    // What is written must be what the next run compares: a plan made again is the same.
    if (UPDATE) assert.deepEqual(await makePlan(), plan, `the plan of ${c.name} changes from one run to the next`);
    // A secret file's content is shown by its path only, as in the deploy log.
    const shown = { ...plan, files: plan.files.map((f) => (f.secret ? { ...f, content: '<secret>' } : f)) };
    checkSnapshot(t, `${c.name}.json`, `${machineFree(plan, JSON.stringify(shown, null, 2), c.dir)}\n`);
    checkSnapshot(t, `${c.name}.txt`, `${machineFree(plan, describePlan(plan).join('\n'), c.dir)}\n`);
  });
}
