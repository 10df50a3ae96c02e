// Runs every test: first the build (which type-checks), the linter and the format check (a broken build,
// a lint error or an unformatted file stops here, before the long part), then the tests in lanes that run
// at the same time, each a file after the other (wholeSuiteLanes below says which files go where).
//   node scripts/run-tests.mjs [filter]          only the files whose path contains the filter
//   node scripts/run-tests.mjs --unit [filter]   the unit suite (npm run test:unit): src/ and the
//       contract suites, without the files below that use the machine or root (MACHINE_TESTS,
//       ROOT_TESTS); it needs no root (the few tests left that do are skipped, saying why) and
//       runs within a minute: the run ends by printing its time against that budget.
//   node scripts/run-tests.mjs --plan            the lanes and their files, nothing run
// What was skipped is listed at the end; under CI=true any skip fails the run, whatever its cause.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { dealFiles, readFileTimes, secondsOf } from './test-lanes.mjs';

const root = new URL('..', import.meta.url).pathname;

function findTests(dir) {
  // A checkout without benches (a packaged copy) has no bench/ to look in.
  if (!existsSync(dir)) return [];
  const found = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found.push(...findTests(path));
    else if (entry.endsWith('.test.ts')) found.push(relative(root, path));
  }
  return found.sort();
}

/** Runs a check before the tests; its own output says what failed. */
function check(name, command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    const fix = {
      build: 'npm run typecheck',
      lint: 'npm run lint',
      'format check': 'npm run format, which rewrites the files in place',
    }[name];
    console.error(`The ${name} failed: fix it before the tests run (${fix}).`);
    process.exit(1);
  }
}

/**
 * Test files that use the machine more than a unit test should: they fetch from the package
 * registries, run real builds, start real servers (sshd, nginx) or drive the Docker swarm. They
 * run in the whole suite, not in the unit suite, which must stay under a minute on two cores.
 */
const MACHINE_TESTS = [
  'src/providers/node/examples-run.test.ts',
  'src/providers/sbt/sbt-build.test.ts',
  'src/toolchains/catalog.test.ts',
  'src/toolchains/ensure-tool.test.ts',
  'src/toolchains/sbt/launcher.test.ts',
  'src/toolchains/sbt/maven-repository.test.ts',
  'src/receiver/ssh-git-server.test.ts',
  'bench/nginx/nginx-router.test.ts',
  'src/router/haproxy/haproxy-router.test.ts',
  'src/router/haproxy/supervision.test.ts',
  'src/instances/swarm/node-apis.test.ts',
  'src/instances/swarm/swarm-backend.test.ts',
  'test/contracts/instance-backend-swarm.test.ts',
];

/**
 * Test files that start real servers, network namespaces or control groups as root: not unit
 * tests either (as another user they would only skip), so the unit suite leaves them out too. The
 * whole suite runs them where it did, those beside the code beside the integration files.
 */
const ROOT_TESTS = [
  'src/addons/postgresql.test.ts',
  'src/addons/reached-from-sandbox.test.ts',
  'src/addons/redis.test.ts',
  'src/backups/redis/redis-servers.test.ts',
  'src/instances/local/local-backend.test.ts',
  'test/contracts/instance-backend-local.test.ts',
];
const notUnitTests = [...MACHINE_TESTS, ...ROOT_TESTS];
// A name that names no file (a test moved or renamed) would let the file back into the unit
// suite: say so (where the folder it names is there: a packaged copy has no bench/, a small
// project of the tooling tests has none of these folders).
for (const file of notUnitTests) {
  if (existsSync(dirname(join(root, file))) && !existsSync(join(root, file))) {
    console.error(`scripts/run-tests.mjs: MACHINE_TESTS or ROOT_TESTS names ${file}, which does not exist; update the list.`);
    process.exit(1);
  }
}

/**
 * Integration files that run beside the one-at-a-time integration files, with the unit files:
 * those that mostly wait (on the clock, on the API, on a small app's deploy) and hold no figure
 * that another daemon's build beside them would upset. They keep to their own ports, subnets and
 * names, as every test daemon does. What stays in the main lane: the heavy builds (Scala, the
 * example apps, private registries, the previous commit's build), the Docker Swarm, and every
 * file that measures latency, counts failed requests under load or times a restart. The
 * console's tests in Chromium go beside too (BESIDE_FILES): they wait on the page and measure
 * nothing. The split keeps the lanes near the same length (the run prints each).
 */
const BESIDE = [
  'acme',
  'addon-access',
  'addon-backups',
  'addons',
  'api-contract',
  'app-delete',
  'backup-store-s3',
  'backup-store-s3-daemon',
  'cancel',
  'cli-reference',
  'control-plane',
  'cron',
  'data-folder-upgrade',
  'default-domain-https',
  'disk-budget',
  'disk-full',
  'domains',
  'drains',
  'edge-https',
  'egress',
  'egress-clients',
  'firewall',
  'fs-bucket-backups',
  'hooks',
  'hostile-apps',
  'hostile-files',
  'interrupted-deploy',
  'liveness-flapping',
  'notifications',
  'plan-before-push',
  'privileged-sql',
  'push-disk-reserve',
  'platform-backup',
  'quotas',
  'redis-backups',
  'redis-sandbox',
  'rollback',
  'route-scopes',
  'run',
  'scale-to-zero',
  'secrets-at-rest',
  'shared-postgresql-move',
  'start-process',
  'tenant-bounds',
  'tenant-domains',
  'tenant-isolation',
  'token-scopes',
  'tokens-members',
  'two-daemons',
  'workers',
].map((name) => `test/integration/${name}.test.ts`);
/** Files beside the main lane outside test/integration (see BESIDE). */
const BESIDE_FILES = ['test/e2e/console.test.ts', 'test/e2e/console-actions.test.ts'];
/**
 * The files of the main lane's kind that run heavy builds (Scala, the example apps with every
 * package manager, private registries, a previous commit's build) and hold no latency figure:
 * they get a lane of their own beside the main one.
 */
const BUILDS = [
  'src/providers/node/examples-run.test.ts',
  'src/providers/sbt/sbt-build.test.ts',
  'test/integration/flavors.test.ts',
  'test/integration/node-examples.test.ts',
  'test/integration/package-install.test.ts',
  'test/integration/private-git-dependency.test.ts',
  'test/integration/private-registry.test.ts',
  'test/integration/runtimes.test.ts',
  'test/integration/scala.test.ts',
  'test/integration/upgrade.test.ts',
];
/** How many lanes the files that mostly wait are dealt out to. */
const BESIDE_LANES = 2;
// A name that names no file (a test renamed or removed) would move nothing beside: say so (in a
// checkout that has the integration tests).
const hasIntegrationTests = existsSync(join(root, 'test', 'integration'));
for (const file of [...BESIDE, ...BESIDE_FILES, ...BUILDS]) {
  if (hasIntegrationTests && !existsSync(join(root, file))) {
    console.error(`scripts/run-tests.mjs: BESIDE or BUILDS names ${file}, which does not exist; update the list.`);
    process.exit(1);
  }
}

/** Files that use the Docker Swarm run in the main lane: one swarm, one user at a time. */
function runsBeside(file) {
  if (BESIDE.includes(file) || BESIDE_FILES.includes(file)) return true;
  const unitFile = file.startsWith('src/') || file.startsWith('bench/');
  return unitFile && !MACHINE_TESTS.includes(file) && !file.startsWith('src/instances/swarm/');
}

/** The unit suite's budget (CONTRIBUTING.md): once built and checked, its tests run within it. */
const UNIT_BUDGET_SECONDS = 60;

const args = process.argv.slice(2);
const unitOnly = args.includes('--unit');
const filter = args.find((a) => !a.startsWith('--'));
const pick = (files) => (filter ? files.filter((f) => f.includes(filter)) : files);
// The bench's own helpers (the nginx reference engine) are tested with the code beside them.
const unit = pick([...findTests(join(root, 'src')), ...findTests(join(root, 'bench'))]);
const integration = pick(findTests(join(root, 'test')));
const files = unitOnly
  ? [
      ...unit.filter((f) => !notUnitTests.includes(f)),
      ...integration.filter((f) => f.startsWith('test/contracts/') && !notUnitTests.includes(f)),
    ]
  : [...unit, ...integration];
if (files.length === 0) {
  console.error(`No test file matches ${JSON.stringify(filter)}.`);
  process.exit(1);
}
// The unit suite runs its files in UNIT_PROCESSES processes at once, each importing its share
// of them one after the other (scripts/unit-shard.mjs): a process per file spent three quarters
// of the suite's processor time starting Node and the TypeScript loader and loading the same
// modules again. The whole suite runs two lanes at once, a process per file: the integration
// files one at a time (they start real daemons, servers and builds), and beside them the unit
// files and the integration files that mostly wait on the clock (see BESIDE).
const UNIT_PROCESSES = 2;
const concurrency = unitOnly ? UNIT_PROCESSES : 1;
const lanes = unitOnly ? [{ name: 'unit', files, concurrency, shared: files }] : wholeSuiteLanes();
// --plan: the lanes and their files, with the times they are balanced on, and nothing run.
if (args.includes('--plan')) {
  const times = readFileTimes(join(root, 'test', 'file-times.tsv'));
  for (const lane of lanes) {
    const seconds = lane.files.reduce((sum, file) => sum + secondsOf(file, times), 0);
    console.log(`${lane.name}\t${Math.round(seconds)} s\t${lane.files.length} files\n${lane.files.map((f) => `  ${f}`).join('\n')}`);
  }
  process.exit(0);
}
const bin = (name) => join(root, 'node_modules', '.bin', name);
// Under CI a part of the machine some files need (a JDK, Pebble, the Docker Swarm) that is missing
// fails the run before anything else, saying what: those tests would skip, and a CI run that
// passes with a part of the suite skipped proves nothing. Elsewhere they skip, saying why.
const ci = !['', '0', 'false'].includes(process.env.CI ?? '');
if (ci) {
  const parts = spawnSync(process.execPath, ['--import', 'tsx', 'test/support/suite-parts.ts', ...files], { cwd: root, encoding: 'utf8' });
  if (parts.status !== 0) {
    console.error(
      `CI=${process.env.CI}: the files selected need parts this machine lacks, and CI does not skip them:\n` +
        `${parts.stdout}${parts.stderr}Install them with \`./dev setup\` as root (scripts/setup.sh says what it could not install).`,
    );
    process.exit(1);
  }
}
// A build, not a type check only: the integration tests start the CLI and the daemon from dist/, so
// every entry point (npm test, npm run test:unit, ./dev test, this script) tests the sources as they
// are now. The whole build takes a few seconds.
const checksStarted = performance.now();
check('build', bin('tsc'), ['-p', 'tsconfig.json']);
check('build', bin('tsc'), ['-p', 'tsconfig.console.json']);
check('build', process.execPath, ['scripts/bundle-cli.mjs']);
check('lint', bin('biome'), ['lint']);
check('format check', bin('biome'), ['format']);
// Beside the spec reporter, one that records what was skipped and when each file ended (scripts/run-record-reporter.mjs).
const recordDir = mkdtempSync(join(tmpdir(), 'slipway-test-record-'));
const testsStarted = performance.now();
const testsStartedAt = Date.now();
// Test daemons' data folders (test/support/daemon.ts: mkdtemp's six characters) and what a daemon
// keeps beside its folder (the default backup folder, the secrets key), there before the run.
const DAEMON_FOLDER = /^slipway-test-[A-Za-z0-9]{6}(-backups|\.secrets-key)?$/;
const daemonFolders = () => readdirSync(tmpdir()).filter((name) => DAEMON_FOLDER.test(name));
const foldersBefore = new Set(daemonFolders());
// The first lane prints as it goes; the others write to a file printed once all have ended.
const results = await Promise.all(lanes.map((lane, index) => runLane(lane, index === 0)));
let failed = results.some((status) => status !== 0);

// Each test daemon's data folder goes when its test file ends (test/support/app-users-cleanup.ts);
// one left behind holds a mount or a process a test did not end, and would fill the disk over runs.
const foldersLeft = daemonFolders().filter((name) => !foldersBefore.has(name));
if (foldersLeft.length > 0) {
  console.error(
    `\n${foldersLeft.length} test daemon data folder(s) left behind (something is still mounted in them, or their daemon runs):\n` +
      foldersLeft.map((name) => `  - ${join(tmpdir(), name)}`).join('\n'),
  );
  failed = true;
}
for (const lane of lanes.slice(1)) {
  console.log(`\n==> the ${lane.name} lane (${lane.files.length} files, run at the same time as the above):\n`);
  console.log(readFileSync(lane.outputFile, 'utf8'));
}

/**
 * The whole suite's lanes, run at the same time, each a file after the other: the files that
 * measure latency, count failed requests or drive the Docker Swarm in one (the main lane, whose
 * figures no two of them upset in each other); the heavy builds in another; the files that mostly
 * wait dealt out to BESIDE_LANES more, their unit files loaded into one shared process (as the
 * unit suite does) and the rest a process each. Lanes are balanced on measured times.
 */
function wholeSuiteLanes() {
  const times = readFileTimes(join(root, 'test', 'file-times.tsv'));
  const beside = files.filter(runsBeside);
  const sharedUnits = beside.filter((f) => !f.startsWith('test/') && !ROOT_TESTS.includes(f));
  const besideLanes = dealFiles(
    beside.filter((f) => !sharedUnits.includes(f)),
    BESIDE_LANES,
    times,
  );
  // The shared unit files go to the lane that ends first.
  const shortest = besideLanes.reduce((best, lane) => (lane.seconds < best.seconds ? lane : best));
  return [
    { name: 'main', files: files.filter((f) => !runsBeside(f) && !BUILDS.includes(f)), concurrency },
    { name: 'builds', files: files.filter((f) => BUILDS.includes(f)), concurrency },
    ...besideLanes.map((lane, index) => ({
      name: `beside-${index + 1}`,
      files: lane === shortest ? [...sharedUnits, ...lane.files] : lane.files,
      shared: lane === shortest ? sharedUnits : [],
      concurrency,
    })),
  ].filter((lane) => lane.files.length > 0);
}

function runLane(lane, printsAsItGoes) {
  lane.recordFile = join(recordDir, `${lane.name}.tsv`);
  lane.outputFile = join(recordDir, `${lane.name}.out`);
  const output = printsAsItGoes ? 'inherit' : openSync(lane.outputFile, 'w');
  const shared = lane.shared ?? [];
  const entries = [
    ...(shared.length > 0 ? unitShards(shared, unitOnly ? lane.concurrency : 1) : []),
    ...lane.files.filter((f) => !shared.includes(f)),
  ];
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--test',
      `--test-concurrency=${lane.concurrency}`,
      // A stuck test fails, named, after 20 minutes instead of holding the run until CI gives
      // up; a file whose tests are done exits even if something it started still holds it.
      '--test-timeout=1200000',
      '--test-force-exit',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      `--test-reporter=${join(root, 'scripts', 'run-record-reporter.mjs')}`,
      // It writes its record itself (SLIPWAY_TEST_RECORD below), nothing to a destination.
      '--test-reporter-destination=/dev/null',
      ...entries,
    ],
    { cwd: root, stdio: ['ignore', output, output], env: { ...process.env, SLIPWAY_REPO: root, SLIPWAY_TEST_RECORD: lane.recordFile } },
  );
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}
/**
 * Deals the files out to `count` entry files, each loading its share in one process: dealt
 * in turn, so the heavier files of a folder (a folder's real servers) go to different ones.
 */
function unitShards(files, count) {
  const loader = join(root, 'scripts', 'unit-shard.mjs');
  return Array.from({ length: Math.min(count, files.length) }, (_, index) => {
    const share = files.filter((_, at) => at % count === index).map((file) => join(root, file));
    const entry = join(recordDir, `unit-${index + 1}.test.mjs`);
    const name = `unit files, share ${index + 1} of ${count}`;
    writeFileSync(
      entry,
      `import { loadUnitShard } from ${JSON.stringify(loader)};\nawait loadUnitShard(${JSON.stringify(name)}, ${JSON.stringify(share)});\n`,
    );
    return entry;
  });
}
const testSeconds = Math.round((performance.now() - testsStarted) / 1000);
const checkSeconds = Math.round((testsStarted - checksStarted) / 1000);
/**
 * The unit suite's time against its budget, last thing printed. Said, not enforced: a loaded
 * machine should not fail the run, but a suite that outgrew its budget shows it every time.
 */
function reportTime() {
  if (!unitOnly || filter) return;
  const over = testSeconds > UNIT_BUDGET_SECONDS ? ', over it' : '';
  console.error(
    `\nunit suite: ${testSeconds} s of its ${UNIT_BUDGET_SECONDS} s budget${over} (the build, lint and format check before it: ${checkSeconds} s).`,
  );
}
/**
 * The slowest files of a run that took them one at a time, what to look at first when the suite
 * outgrows its time. A file's time runs from the previous file's last test to its own last.
 */
function reportSlowestFiles() {
  if (unitOnly) return;
  const allTimes = [];
  for (const lane of lanes) {
    const lastEnd = new Map();
    for (const [file, at] of recorded(lane, 'ended')) lastEnd.set(file, Number(at));
    const ends = [...lastEnd.entries()].sort((a, b) => a[1] - b[1]);
    if (ends.length === 0) continue;
    let previous = testsStartedAt;
    const spans = ends.map(([file, end]) => {
      const span = { file, seconds: (end - previous) / 1000 };
      previous = end;
      return span;
    });
    const total = (previous - testsStartedAt) / 1000;
    for (const span of spans) if (!span.file.startsWith(recordDir)) allTimes.push([relative(root, span.file), span.seconds.toFixed(0)]);
    const byTime = spans
      .sort((a, b) => b.seconds - a.seconds)
      .map((s) => `  ${s.seconds.toFixed(0).padStart(5)} s  ${relative(root, s.file)}`);
    // Every file's time, for moving files between the lanes (BESIDE) with figures, not guesses.
    mkdirSync(join(root, 'test-artifacts'), { recursive: true });
    writeFileSync(join(root, 'test-artifacts', `${lane.name}-lane-times.txt`), `${byTime.join('\n')}\n`);
    console.error(
      `\nthe ${lane.name} lane took ${total.toFixed(0)} s; its slowest files (all in test-artifacts/${lane.name}-lane-times.txt):\n` +
        byTime.slice(0, 12).join('\n'),
    );
  }
  // What the lanes are balanced on (test/file-times.tsv): copy it there when files moved or changed much.
  mkdirSync(join(root, 'test-artifacts'), { recursive: true });
  const lines = allTimes.sort(([a], [b]) => a.localeCompare(b)).map(([file, seconds]) => `${seconds}\t${file}`);
  writeFileSync(join(root, 'test-artifacts', 'file-times.tsv'), `${lines.join('\n')}\n`);
}
/** Each failed test with the start of its error, last: a CI log cut to its end still says why. */
function reportFailures() {
  const failures = lanes.flatMap((lane) => recorded(lane, 'failed'));
  if (failures.length === 0) return;
  const lines = failures.map(([file, name, error]) => `  - ${file ? `${relative(root, file)}: ` : ''}${name}\n      ${error}`);
  console.error(`\n${failures.length} test(s) failed:\n${lines.join('\n')}`);
}
/** The record's lines of one kind, split into their fields (none: the runner got no further). */
function recorded(lane, kind) {
  let text = '';
  try {
    text = readFileSync(lane.recordFile, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .map((line) => line.split('\t'))
    .filter((fields) => fields[0] === kind)
    .map((fields) => fields.slice(1));
}
reportSlowestFiles();
reportFailures();
const skipped = lanes.flatMap((lane) => recorded(lane, 'skipped')).map((fields) => fields.join('\t'));
rmSync(recordDir, { recursive: true, force: true });
if (skipped.length > 0) {
  const lines = skipped.map((line) => {
    const [file, name, reason] = line.split('\t');
    return `  - ${file ? `${relative(root, file)}: ` : ''}${name}: ${reason}`;
  });
  console.error(`\n${skipped.length} test(s) or suite(s) skipped:\n${lines.join('\n')}`);
  // The parts checked above are the usual causes; anything else that skips fails CI here.
  if (ci) {
    console.error(
      `CI=${process.env.CI}: a CI run must not skip tests. Give this machine what each reason above names ` +
        '(`./dev setup` as root installs what it can and says what it could not), then run again.',
    );
    reportTime();
    process.exit(1);
  }
}
reportTime();
process.exit(failed ? 1 : 0);
