/**
 * sbt builds of examples/scala-single on a fresh daemon:
 *   1. first deploy, empty app cache (sbt, Scala, the plugins and the dependencies downloaded,
 *      everything compiled);
 *   2. a new commit that changes no source (sbt's caches and its incremental state kept);
 *   3. a one-line change of Main.scala: the warm redeploy a developer makes all day.
 * Baseline, measured in the same run: a bare `sbt stage` of the same one-line change, run as
 * root without the platform (no sandbox, no export, no cache moves) in a checkout whose
 * target/ is warm from a previous stage, with a copy of the app's sbt caches. Target: the warm
 * redeploy's build phase ("Build succeeded in", which includes the export) at most 1.2 times it.
 *
 * The baseline runs in a CPU cgroup of its own beside the daemon's, with the same default
 * weight: on a busy machine the scheduler gives each group one share, however many threads
 * it runs, while a process left in the root group gets a share per thread. Without it the
 * comparison would measure the machine's other work, not slipway. Deploys and bare builds of
 * one-line changes alternate, three of each, and the medians are compared.
 *
 * The sbt launcher sits in the shared toolchain cache; when it is not there yet the first
 * deploy fetches it too (the log says so, and the result records it).
 *
 *   node --import tsx bench/sbt-build.ts
 *   SBT_BENCH_LOGS=/tmp/logs node --import tsx bench/sbt-build.ts   (keeps every log, timed, to compare phases)
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { planSbt } from '../src/providers/sbt/sbt-provider.js';
import { prepareSbtPlan } from '../src/providers/sbt/prepare.js';
import { detectLayout } from '../src/sandbox/cgroups.js';
import { startDaemon, type TestDaemon } from '../test/support/daemon.js';
import {
  checkoutExample,
  commitAll,
  createApp,
  deploymentLog,
  getThroughRouter,
  gitPush,
  newRelease,
  registerSshKey,
} from '../test/support/deploy.js';

export interface SbtBuildResult {
  /** git push to the app answering 200 through the router, empty app cache. */
  firstSeconds: number;
  /** The same, for a new commit that changes no source. */
  secondSeconds: number;
  /** second / first, push to live. */
  ratio: number;
  /** "Build succeeded in" of each deployment's log: receive and build only. */
  firstBuildSeconds: number;
  secondBuildSeconds: number;
  /** second / first, build phase only. */
  buildRatio: number;
  /** Push to live and build phase of a one-line change of Main.scala (medians). */
  editSeconds: number;
  editBuildSeconds: number;
  editBuildRuns: number[];
  /** A bare `sbt stage` of a one-line change, warm, outside the platform, in a CPU group of its own (median). */
  bareSeconds: number;
  bareRuns: number[];
  /** editBuildSeconds / bareSeconds: the target is at most 1.2. */
  editOverBare: number;
  /** The second build compiled no source; the edit compiled the changed one only. */
  unchangedCompiledNothing: boolean;
  editCompiledOne: boolean;
  /** The first deploy also fetched the sbt launcher into the toolchain cache. */
  launcherFetched: boolean;
}

const COMPILING = /compiling (\d+) Scala sources?/;

/**
 * git push (it returns once the deployment is queued), then the deployment's end, asked of the
 * API from this process on one keep-alive connection. The tests' pushAndWait asks through the
 * CLI, a new Node process every half second: on 2 cores those took CPU from the very build
 * being timed (and none from the bare build it is compared with), which made every sbt phase
 * of the deployment evenly slower with the same CPU time.
 */
async function pushAndWaitQuietly(daemon: TestDaemon, dir: string, appId: string, gitEnv: NodeJS.ProcessEnv) {
  const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim();
  const push = await gitPush(dir, `git+ssh://git@127.0.0.1:${daemon.sshPort}/${appId}.git`, gitEnv);
  if (push.code !== 0) throw new Error(`git push failed:\n${push.output}`);
  const deadline = Date.now() + 600_000;
  while (Date.now() < deadline) {
    const answer = await fetch(`${daemon.apiUrl}/v1/apps/${appId}/deployments?limit=20`, {
      headers: { authorization: `Bearer ${daemon.adminToken}` },
    });
    if (answer.ok) {
      const { deployments } = (await answer.json()) as { deployments: Array<{ id: string; commit: string; state: string }> };
      const found = deployments.find((d) => d.commit === commit);
      if (found && found.state !== 'WIP') return found;
    } else await answer.arrayBuffer();
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the deployment of ${commit} did not end within 10 minutes`);
}

async function timedDeploy(daemon: TestDaemon, dir: string, appId: string, gitEnv: NodeJS.ProcessEnv) {
  const started = performance.now();
  const result = await pushAndWaitQuietly(daemon, dir, appId, gitEnv);
  const log = await deploymentLog(daemon, appId, result.id);
  if (result.state !== 'OK') throw new Error(`deployment ${result.id} ended ${result.state}:\n${log.join('\n')}`);
  for (;;) {
    const answer = await getThroughRouter(daemon, `${appId}.localhost`);
    if (answer.status === 200) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const seconds = (performance.now() - started) / 1000;
  keepLog(result.id, readFileSync(join(daemon.dataDir, 'logs', `${result.id}.ndjson`), 'utf8'));
  const built = log.map((l) => /^Build succeeded in ([\d.]+) s$/.exec(l)).find(Boolean);
  if (!built) throw new Error(`deployment ${result.id} has no "Build succeeded in" line`);
  const compiled = log
    .map((l) => COMPILING.exec(l))
    .filter(Boolean)
    .map((m) => Number(m![1]));
  return { seconds, buildSeconds: Number(built[1]), log, compiled };
}

/** A one-line change of the app's source, different each time it is called. */
let edits = 0;
function editSource(dir: string): void {
  const path = join(dir, 'src/main/scala/example/Main.scala');
  writeFileSync(path, readFileSync(path, 'utf8').replace(/\}\s*$/, `  val edit${++edits} = ${edits}\n}\n`));
}

/** A top-level CPU cgroup for the baseline (v1 `cpu` hierarchy or the v2 tree), default weight. */
function makeCpuGroup(): { procs: string; remove(): void } {
  const v2 = detectLayout() === 'v2';
  const dir = v2 ? `/sys/fs/cgroup/slwbench-bare-sbt-${process.pid}` : `/sys/fs/cgroup/cpu/slwbench-bare-sbt-${process.pid}`;
  mkdirSync(dir);
  return { procs: join(dir, 'cgroup.procs'), remove: () => rmdirSync(dir) };
}

function runSbt(argv: string[], cwd: string, cgroupProcs?: string): Promise<{ seconds: number; output: string; timed: string }> {
  const started = performance.now();
  // The shell joins the group, then becomes sbt: every thread of the JVM starts inside it.
  const command = cgroupProcs ? ['sh', '-c', 'echo $$ > "$0" && exec "$@"', cgroupProcs, ...argv] : argv;
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let timed = '';
    const collect = (d: Buffer) => {
      output += d;
      timed += `${((performance.now() - started) / 1000).toFixed(2)} ${d}`;
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`sbt exited ${code}:\n${output}`));
      else resolve({ seconds: (performance.now() - started) / 1000, output, timed });
    });
  });
}

/**
 * The baseline: sbt run by hand in a checkout, with a copy of the app's sbt caches (so nothing
 * is downloaded), in a CPU group of its own; run once to warm target/ before the timed runs.
 */
class BareSbt {
  private constructor(
    private readonly scratch: string,
    private readonly dir: string,
    private readonly argv: string[],
    private readonly group: { procs: string; remove(): void },
  ) {}

  static async prepare(daemon: TestDaemon, appId: string): Promise<BareSbt> {
    const scratch = mkdtempSync(join(tmpdir(), 'slipway-bench-bare-sbt-'));
    const dir = checkoutExample('scala-single');
    const appCacheDir = join(scratch, 'app-cache');
    cpSync(join(daemon.dataDir, 'apps', appId, 'cache', 'sbt'), join(appCacheDir, 'sbt'), { recursive: true });
    const toolchainCacheDir = process.env.SLIPWAY_TOOLCHAIN_CACHE ?? '/var/cache/slipway-test/toolchains';
    const plan = await planSbt({ sourceDir: dir, appType: 'sbt', env: {}, catalog: { versions: async () => [] } });
    const argv = (await prepareSbtPlan(plan, { toolchainCacheDir, appCacheDir })).build[0]!.argv;
    const bare = new BareSbt(scratch, dir, argv, makeCpuGroup());
    await runSbt(argv, dir, bare.group.procs);
    return bare;
  }

  /** A one-line change, then `sbt stage`, timed. */
  async edit(): Promise<number> {
    editSource(this.dir);
    const run = await runSbt(this.argv, this.dir, this.group.procs);
    keepLog(`bare-${edits}`, run.timed);
    if (!/compiling 1 Scala source/.test(run.output)) throw new Error(`the bare build did not compile the changed source:\n${run.output}`);
    return run.seconds;
  }

  remove(): void {
    this.group.remove();
    rmSync(this.scratch, { recursive: true, force: true });
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** With SBT_BENCH_LOGS=<folder>, each deployment's log and each bare build's output, timed, are written there: where the time goes. */
function keepLog(name: string, text: string): void {
  const folder = process.env.SBT_BENCH_LOGS;
  if (folder) writeFileSync(join(folder, `${name}.log`), text);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * One-line changes, deployed and built bare in turn: the machine's load changes from minute to
 * minute (other work shares it), so each side is timed several times, interleaved, and the
 * medians compared.
 */
const ROUNDS = 3;

export async function benchSbtBuild(): Promise<SbtBuildResult> {
  const daemon = await startDaemon();
  let bare: BareSbt | undefined;
  try {
    const { gitEnv } = await registerSshKey(daemon);
    const dir = checkoutExample('scala-single');
    const appId = await createApp(daemon, dir, 'scala-bench', { GREETING: 'bench' }, 'sbt');
    newRelease(dir, 'one');
    const first = await timedDeploy(daemon, dir, appId, gitEnv);
    if (!first.log.some((l) => l.includes('[launcher] getting org.scala-sbt sbt'))) {
      throw new Error('the first build did not fetch sbt: its app cache was not empty');
    }
    newRelease(dir, 'two');
    const second = await timedDeploy(daemon, dir, appId, gitEnv);
    const refetched = second.log.filter((l) => l.includes('[launcher] getting'));
    if (refetched.length > 0) throw new Error(`the second build fetched again:\n${refetched.join('\n')}`);

    bare = await BareSbt.prepare(daemon, appId);
    const edits: Array<Awaited<ReturnType<typeof timedDeploy>>> = [];
    const bareSeconds: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      editSource(dir);
      commitAll(dir, `one-line change ${round + 1}`);
      edits.push(await timedDeploy(daemon, dir, appId, gitEnv));
      bareSeconds.push(await bare.edit());
    }
    const editBuild = median(edits.map((e) => e.buildSeconds));
    return {
      firstSeconds: first.seconds,
      secondSeconds: second.seconds,
      ratio: second.seconds / first.seconds,
      firstBuildSeconds: first.buildSeconds,
      secondBuildSeconds: second.buildSeconds,
      buildRatio: second.buildSeconds / first.buildSeconds,
      editSeconds: median(edits.map((e) => e.seconds)),
      editBuildSeconds: editBuild,
      editBuildRuns: edits.map((e) => e.buildSeconds),
      bareSeconds: median(bareSeconds),
      bareRuns: bareSeconds,
      editOverBare: editBuild / median(bareSeconds),
      unchangedCompiledNothing: second.compiled.length === 0,
      editCompiledOne: edits.every((e) => e.compiled.length === 1 && e.compiled[0] === 1),
      launcherFetched: first.log.some((l) => /^sbt launcher [\d.]+: fetching /.test(l)),
    };
  } finally {
    bare?.remove();
    await daemon.stop();
  }
}

export function describeSbtBuild(r: SbtBuildResult): string {
  return (
    `sbt builds (scala-single): first deploy (empty app cache${r.launcherFetched ? ', launcher fetched' : ''}) ${r.firstSeconds.toFixed(1)} s, ` +
    `new commit, no source changed ${r.secondSeconds.toFixed(1)} s (${r.ratio.toFixed(2)}; ${r.unchangedCompiledNothing ? 'nothing compiled' : 'SOURCES COMPILED AGAIN'}); ` +
    `build phase ${r.firstBuildSeconds.toFixed(1)} s vs ${r.secondBuildSeconds.toFixed(1)} s (${r.buildRatio.toFixed(2)}); ` +
    `one-line change (medians of ${r.editBuildRuns.length}): push to live ${r.editSeconds.toFixed(1)} s, build phase ${r.editBuildSeconds.toFixed(1)} s ` +
    `vs a bare warm \`sbt stage\` ${r.bareSeconds.toFixed(1)} s = ${r.editOverBare.toFixed(2)} (target <= 1.2${r.editCompiledOne ? '' : '; MORE THAN THE CHANGED SOURCE COMPILED'}); ` +
    `runs: slipway ${r.editBuildRuns.map((s) => s.toFixed(1)).join(', ')} s, bare ${r.bareRuns.map((s) => s.toFixed(1)).join(', ')} s`
  );
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const r = await benchSbtBuild();
  console.log(describeSbtBuild(r));
  console.log(JSON.stringify(r));
}
