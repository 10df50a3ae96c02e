/**
 * Build cache, per package manager: how much faster a redeploy is when the lockfile did not
 * change. Each manager installs the same tree (express 4.21.2 and its ~65 packages): npm from
 * examples/node-cached, and pnpm, Yarn 1, Yarn berry (node-modules linker) and Bun from a copy
 * of it whose lockfile this bench writes first with that manager on this machine (from the
 * registry npm is configured with). Each app is deployed once with an empty app cache, then a
 * new commit with the same lockfile is pushed, which finds the kept package cache and
 * node_modules. A hello-world deploy first puts Node.js and npm in the toolchain cache, and the
 * lockfile runs put the managers there, so no timed deploy fetches tools.
 *
 *   node --import tsx bench/build-cache.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ToolName } from '../src/providers/plan.js';
import { ensureTool, toolPath } from '../src/toolchains/ensure-tool.js';
import { startDaemon, type TestDaemon } from '../test/support/daemon.js';
import {
  EXAMPLES,
  checkoutExample,
  commitAll,
  createApp,
  deploymentLog,
  getThroughRouter,
  newRelease,
  pushAndWait,
  registerSshKey,
} from '../test/support/deploy.js';

export interface ManagerResult {
  manager: string;
  /** git push to OK, first build of the app (empty app cache). */
  firstSeconds: number;
  /** git push to OK, new commit with the same lockfile. */
  secondSeconds: number;
  /** second / first, whole deployment. */
  ratio: number;
  /** "Build succeeded in" of each deployment's log: receive and build only. */
  firstBuildSeconds: number;
  secondBuildSeconds: number;
  /** second / first, build phase only. */
  buildRatio: number;
}

export interface BuildCacheResult {
  managers: ManagerResult[];
}

interface Manager {
  name: string;
  /** package.json's packageManager, which also selects the tool version. */
  packageManager?: string;
  tool: { name: ToolName; version: string };
  /** Writes the lockfile (and whatever else it installs, left uncommitted). */
  lock: string[];
  files?: Record<string, string>;
}

const NODE = '24.11.0';
const MANAGERS: Manager[] = [
  {
    name: 'pnpm',
    packageManager: 'pnpm@10.34.9',
    tool: { name: 'pnpm', version: '10.34.9' },
    lock: ['pnpm', 'install', '--lockfile-only'],
  },
  { name: 'Yarn 1', tool: { name: 'yarn', version: '1.22.22' }, lock: ['yarn', 'install', '--ignore-scripts', '--non-interactive'] },
  {
    name: 'Yarn berry (node-modules)',
    packageManager: 'yarn@4.18.1',
    tool: { name: 'yarn', version: '4.18.1' },
    lock: ['yarn', 'install', '--mode=update-lockfile'],
    files: { '.yarnrc.yml': 'nodeLinker: node-modules\n' },
  },
  { name: 'Bun', tool: { name: 'bun', version: '1.3.1' }, lock: ['bun', 'install', '--lockfile-only'] },
];

/** Trust and proxy settings the managers need to reach the registry from this machine. */
function networkEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] =>
        entry[1] !== undefined &&
        /^(NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|HTTPS?_PROXY|NO_PROXY|https?_proxy|no_proxy)$/.test(entry[0]),
    ),
  );
}

/** A checkout of node-cached with the manager's lockfile instead of npm's, committed. */
async function managerProject(manager: Manager, toolchainCache: string): Promise<string> {
  const dir = checkoutExample('node-cached');
  rmSync(join(dir, 'package-lock.json'));
  const pkg = JSON.parse(readFileSync(join(EXAMPLES, 'node-cached', 'package.json'), 'utf8')) as Record<string, unknown>;
  if (manager.packageManager) pkg.packageManager = manager.packageManager;
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  for (const [path, content] of Object.entries(manager.files ?? {})) writeFileSync(join(dir, path), content);
  const installs = [
    await ensureTool(toolchainCache, 'node', NODE),
    await ensureTool(toolchainCache, manager.tool.name, manager.tool.version),
  ];
  const scratch = mkdtempSync(join(tmpdir(), 'slipway-bench-lock-'));
  const registry = execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim();
  try {
    execFileSync(manager.lock[0]!, manager.lock.slice(1), {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        ...networkEnv(),
        PATH: `${toolPath(installs)}:/usr/bin:/bin`,
        HOME: scratch,
        npm_config_registry: registry,
        YARN_NPM_REGISTRY_SERVER: registry,
        YARN_ENABLE_TELEMETRY: '0',
        YARN_ENABLE_GLOBAL_CACHE: 'false',
        YARN_CACHE_FOLDER: join(scratch, 'yarn-cache'),
        BUN_INSTALL_CACHE_DIR: join(scratch, 'bun-cache'),
      },
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  // Only what a developer commits: node_modules and Yarn's folders are in .gitignore or removed.
  rmSync(join(dir, 'node_modules'), { recursive: true, force: true });
  rmSync(join(dir, '.yarn'), { recursive: true, force: true });
  commitAll(dir, `${manager.name} lockfile`);
  return dir;
}

async function timedPush(daemon: TestDaemon, dir: string, appId: string, gitEnv: NodeJS.ProcessEnv, expectCache: boolean) {
  const started = performance.now();
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  const seconds = (performance.now() - started) / 1000;
  const log = await deploymentLog(daemon, appId, result.id);
  if (result.state !== 'OK') throw new Error(`deployment ${result.id} ended ${result.state}:\n${log.join('\n')}`);
  const cacheLine = expectCache
    ? 'A build cache exists for this toolchain: reusing it.'
    : 'No build cache for this toolchain: performing a full build.';
  if (!log.includes(cacheLine)) throw new Error(`deployment ${result.id} did not log "${cacheLine}":\n${log.join('\n')}`);
  const built = log.map((l) => /^Build succeeded in ([\d.]+) s$/.exec(l)).find(Boolean);
  if (!built) throw new Error(`deployment ${result.id} has no "Build succeeded in" line`);
  return { seconds, buildSeconds: Number(built[1]) };
}

async function firstAndRedeploy(daemon: TestDaemon, gitEnv: NodeJS.ProcessEnv, name: string, dir: string): Promise<ManagerResult> {
  newRelease(dir, 'one');
  const appId = await createApp(
    daemon,
    dir,
    `cached-${name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/-$/, '')}`,
    { NODE_ENV: 'production' },
  );
  const first = await timedPush(daemon, dir, appId, gitEnv, false);
  newRelease(dir, 'two');
  const second = await timedPush(daemon, dir, appId, gitEnv, true);
  const answer = await getThroughRouter(daemon, `${appId}.localhost`);
  if (answer.status !== 200 || JSON.parse(answer.body).release !== 'two')
    throw new Error(`the redeployed ${name} app answered ${answer.status} ${answer.body}`);
  return {
    manager: name,
    firstSeconds: first.seconds,
    secondSeconds: second.seconds,
    ratio: second.seconds / first.seconds,
    firstBuildSeconds: first.buildSeconds,
    secondBuildSeconds: second.buildSeconds,
    buildRatio: second.buildSeconds / first.buildSeconds,
  };
}

export async function benchBuildCache(): Promise<BuildCacheResult> {
  const daemon = await startDaemon();
  const made: string[] = [];
  try {
    const { gitEnv } = await registerSshKey(daemon);
    const toolchainCache = process.env.SLIPWAY_TOOLCHAIN_CACHE ?? '/var/cache/slipway-test/toolchains';

    const warmup = checkoutExample('node-hello');
    made.push(warmup);
    const warmupId = await createApp(daemon, warmup, 'toolchain-warmup', { NODE_ENV: 'production' });
    await timedPush(daemon, warmup, warmupId, gitEnv, false);

    const npm = checkoutExample('node-cached');
    made.push(npm);
    const managers = [await firstAndRedeploy(daemon, gitEnv, 'npm', npm)];
    for (const manager of MANAGERS) {
      const dir = await managerProject(manager, toolchainCache);
      made.push(dir);
      managers.push(await firstAndRedeploy(daemon, gitEnv, manager.name, dir));
    }
    return { managers };
  } finally {
    await daemon.stop();
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  }
}

export function describeBuildCache(r: BuildCacheResult): string {
  return [
    'build cache (express tree, redeploy with the same lockfile vs first deploy; build phase, then whole deployment):',
    ...r.managers.map(
      (m) =>
        `  ${m.manager.padEnd(26)} build ${m.firstBuildSeconds.toFixed(1)} s -> ${m.secondBuildSeconds.toFixed(1)} s (${m.buildRatio.toFixed(2)}); ` +
        `deploy ${m.firstSeconds.toFixed(1)} s -> ${m.secondSeconds.toFixed(1)} s (${m.ratio.toFixed(2)})`,
    ),
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const r = await benchBuildCache();
  console.log(describeBuildCache(r));
  console.log(JSON.stringify(r));
}
