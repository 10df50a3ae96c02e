/**
 * What an idle hello-world instance holds beyond the app's own process, started from
 * scripts.start three ways in the same run, in the same sandbox (network namespace, runc, tini):
 *  - npm: `npm run start` with `runc run` in the foreground as the sandbox's parent, npm staying
 *    beside the app for its whole life (before the start command was planned);
 *  - runc: the start command the node provider plans (bash execs the script, no manager left),
 *    `runc run` still in the foreground (before conmon held sandboxes);
 *  - now: the planned start command, conmon as the sandbox's parent (what the platform does).
 * Each figure sums every process of the sandbox's tree but the app: the parent on the host
 * (runc or conmon), tini, and npm or bash when they stay. It creates only test-only names
 * (bridge slwstart0, 10.78.0.0/16, namespaces slws-*, cgroup root slwstart, state under
 * /run/slipway-bench-start, an app user made as the daemon makes one) and removes them.
 *
 *   node --import tsx bench/start-command.ts
 */
import { readFileSync, mkdtempSync, writeFileSync, chmodSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LocalNetnsBackend } from '../src/instances/local/local-netns-backend.js';
import { SandboxHost, type Sandbox, type SandboxHolder } from '../src/sandbox/sandbox-host.js';
import type { Instance } from '../src/instances/backend.js';
import { makeAppUser } from '../test/support/app-user.js';
import { startPlan, SCRIPT_SHELL_ENV } from '../src/providers/node/start-command.js';
import { anonKiB, childrenOf, comm, firstOk, removeCgroupRoot, rssKiB, sleep } from './sandbox.js';

const APP = `require('http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT || 8080), '0.0.0.0');`;
const PACKAGE = { name: 'bench-hello', version: '1.0.0', private: true, scripts: { start: 'node server.js' } };
/**
 * The budget: an idle hello world costs at most this much beyond the app itself, counted as
 * proportional set size. RSS counts in full, in every instance, the pages of the binaries (runc,
 * conmon, tini) that all their processes on the machine share; PSS divides them among their
 * users, so it is what each further instance costs the machine.
 */
const TARGET_BEYOND_APP_KIB = Math.floor(10_000_000 / 1024); // 10 MB
const RUNS = Number(process.env.SLIPWAY_BENCH_RUNS ?? 3);

const NAMES = {
  bridge: 'slwstart0',
  subnet: '10.78.0.0/16',
  prefix: 'slws',
  cgroupRoot: 'slwstart',
  stateDir: '/run/slipway-bench-start',
};

export interface StartMemory {
  appRssKiB: number;
  /** Every process of the tree but the app, the parent on the host (runc or conmon) included. */
  beyondAppRssKiB: number;
  beyondAppAnonKiB: number;
  beyondAppPssKiB: number;
  processes: string[];
}

type Way = 'before' | 'runc' | 'now';

export interface StartCommandBenchResult {
  runs: number;
  /** npm run start, runc run in the foreground. */
  before: StartMemory;
  /** The planned start command, runc run in the foreground. */
  runc: StartMemory;
  /** The planned start command, conmon. */
  now: StartMemory;
  targetBeyondAppKiB: number;
}

/** Proportional set size: shared pages (a binary's text, libraries) divided among their users. */
function pssKiB(pid: number): number {
  const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
  return Number(m?.[1] ?? 0);
}

function cmdline(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
}

/** The idle tree of one instance: the app (node server.js) apart, everything else summed. */
function measure(sandbox: Sandbox): StartMemory {
  const tree = [sandbox.pid, ...childrenOf(sandbox.pid)];
  const app = tree.find((p) => cmdline(p) === 'node server.js');
  if (app === undefined)
    throw new Error(`No "node server.js" under the sandbox's parent (pid ${sandbox.pid}): saw ${tree.map(cmdline).join('; ')}.`);
  const others = tree.filter((p) => p !== app);
  return {
    appRssKiB: rssKiB(app),
    beyondAppRssKiB: others.reduce((sum, p) => sum + rssKiB(p), 0),
    beyondAppAnonKiB: others.reduce((sum, p) => sum + anonKiB(p), 0),
    beyondAppPssKiB: others.reduce((sum, p) => sum + pssKiB(p), 0),
    processes: others.map((p) => `${comm(p)} ${rssKiB(p)} KiB RSS, ${pssKiB(p)} PSS, ${anonKiB(p)} anonymous`),
  };
}

/** The run with the smallest figure beyond the app: the idle state, free of start-up noise. */
function smallest(runs: StartMemory[]): StartMemory {
  return [...runs].sort((a, b) => a.beyondAppAnonKiB - b.beyondAppAnonKiB)[0]!;
}

export async function benchStartCommand(): Promise<StartCommandBenchResult> {
  if (process.getuid?.() !== 0) throw new Error('bench/start-command.ts needs root (network namespaces, runc, cgroups): run it as root.');
  const release = mkdtempSync(join(tmpdir(), 'slipway-bench-start-'));
  chmodSync(release, 0o755);
  writeFileSync(join(release, 'server.js'), APP);
  writeFileSync(join(release, 'package.json'), JSON.stringify(PACKAGE));
  for (const file of ['server.js', 'package.json']) chmodSync(join(release, file), 0o644);

  const planned = startPlan({
    manager: 'npm',
    scripts: PACKAGE.scripts,
    packageName: PACKAGE.name,
    packageVersion: PACKAGE.version,
    startCandidates: [],
  }).start;
  const npm = { argv: ['npm', 'run', 'start'], env: { ...SCRIPT_SHELL_ENV, npm_config_update_notifier: 'false' } };
  const plannedWay = { argv: planned.argv, env: planned.env ?? {} };
  const ways: Record<Way, { argv: string[]; env: Record<string, string>; holder: SandboxHolder }> = {
    before: { ...npm, holder: 'runc' },
    runc: { ...plannedWay, holder: 'runc' },
    now: { ...plannedWay, holder: 'conmon' },
  };

  const appUser = await makeAppUser('bench-start');
  const user = appUser.user;
  // One backend per holder on the same bridge and subnet: one instance runs at a time, so their
  // address pools never hand out the same address at once.
  const backendWith = (holder: SandboxHolder) => {
    const sandboxes = new SandboxHost({
      bundlesDir: join(NAMES.stateDir, 'bundles'),
      stateDir: join(NAMES.stateDir, 'runc'),
      cgroupRoot: NAMES.cgroupRoot,
      holder,
    });
    return {
      sandboxes,
      backend: new LocalNetnsBackend({ bridgeName: NAMES.bridge, subnet: NAMES.subnet, namespacePrefix: NAMES.prefix, sandboxes }),
    };
  };
  const hosts = { runc: backendWith('runc'), conmon: backendWith('conmon') };
  const seen: Record<Way, StartMemory[]> = { before: [], runc: [], now: [] };
  try {
    await hosts.conmon.sandboxes.sweep();
    await hosts.conmon.backend.init();
    await hosts.runc.backend.init();
    // Alternating, so every way sees the same machine.
    for (let i = 0; i < RUNS; i++) {
      for (const way of ['before', 'runc', 'now'] as const) {
        const instance: Instance = await hosts[ways[way].holder].backend.start({
          appId: 'bench',
          deploymentId: 'bench',
          instanceId: `bench-start-${way}-${i}`,
          instanceNumber: 0,
          releaseDir: release,
          beforeStart: [],
          command: ways[way].argv,
          env: { PATH: '/usr/bin:/bin', HOME: release, PORT: '8080', ...ways[way].env },
          sandbox: { user, limits: { memoryBytes: 512 * 1024 * 1024, pids: 512, cpuShares: 512 }, flavor: 'nano', readOnlyPaths: [] },
          onLog: () => undefined,
        });
        try {
          await firstOk(instance.address, instance.port);
          await sleep(1500); // idle
          const sandbox = (instance as unknown as { group?: Sandbox }).group;
          if (!sandbox)
            throw new Error(
              "The local instance no longer exposes its sandbox as `group`; update bench/start-command.ts to find the sandbox's parent.",
            );
          seen[way].push(measure(sandbox));
        } finally {
          await instance.stop(1000);
        }
      }
    }
  } finally {
    for (const host of Object.values(hosts))
      await host.backend.stopAll(1000).catch((e) => console.error(`bench: stopping instances: ${(e as Error).message}`));
    await hosts.conmon.backend
      .removeBridge()
      .catch((e) => console.error(`bench: removing bridge ${NAMES.bridge}: ${(e as Error).message}`));
    removeCgroupRoot(NAMES.cgroupRoot);
    rmSync(NAMES.stateDir, { recursive: true, force: true });
    rmSync(release, { recursive: true, force: true });
    await appUser.remove().catch((e) => console.error(`bench: removing the app user: ${(e as Error).message}`));
  }
  return {
    runs: RUNS,
    before: smallest(seen.before),
    runc: smallest(seen.runc),
    now: smallest(seen.now),
    targetBeyondAppKiB: TARGET_BEYOND_APP_KIB,
  };
}

export function describeStartCommand(r: StartCommandBenchResult): string {
  const mib = (kib: number) => `${(kib / 1024).toFixed(1)} MiB`;
  const line = (name: string, m: StartMemory) =>
    `  ${name}: app ${mib(m.appRssKiB)} RSS; beyond it ${mib(m.beyondAppPssKiB)} PSS, ${mib(m.beyondAppRssKiB)} RSS, ${mib(m.beyondAppAnonKiB)} anonymous (${m.processes.join('; ')})`;
  const met = (m: StartMemory) => (m.beyondAppRssKiB <= r.targetBeyondAppKiB ? 'met' : 'NOT met');
  const ratios = (m: StartMemory, base: StartMemory) =>
    `PSS ${(m.beyondAppPssKiB / base.beyondAppPssKiB).toFixed(2)}, RSS ${(m.beyondAppRssKiB / base.beyondAppRssKiB).toFixed(2)}, ` +
    `anonymous ${(m.beyondAppAnonKiB / base.beyondAppAnonKiB).toFixed(2)}`;
  return [
    `idle hello world started from scripts.start, memory beyond the app (best of ${r.runs} runs each):`,
    line('npm run start, runc run in the foreground', r.before),
    line('planned start command, runc run in the foreground', r.runc),
    line('now: planned start command, conmon', r.now),
    `  beyond the app, now/runc in the foreground: ${ratios(r.now, r.runc)}; now/npm run start: ${ratios(r.now, r.before)}`,
    `  target at most 10 MB (${mib(r.targetBeyondAppKiB)}) beyond the app, counted as RSS (every shared page in full): ` +
      `now ${met(r.now)}, runc in the foreground ${met(r.runc)}`,
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const r = await benchStartCommand();
  console.log(describeStartCommand(r));
  console.log(JSON.stringify(r));
}
