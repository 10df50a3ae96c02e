/**
 * Build cache: how much faster a redeploy is when the lockfile did not change. The
 * node-cached example (npm, package-lock.json, express and its ~70 packages) is deployed
 * once with an empty app cache, then a new commit with the same lockfile is pushed, which
 * finds the app's npm cache from the first build. A hello-world deploy first puts Node.js
 * and npm in the toolchain cache, so neither timed deploy fetches tools.
 *
 *   node --import tsx bench/build-cache.ts
 */
import { pathToFileURL } from 'node:url';
import { startDaemon, type TestDaemon } from '../test/support/daemon.js';
import { checkoutExample, createApp, deploymentLog, getThroughRouter, newRelease, pushAndWait, registerSshKey } from '../test/support/deploy.js';

export interface BuildCacheResult {
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

async function timedPush(daemon: TestDaemon, dir: string, appId: string, gitEnv: NodeJS.ProcessEnv, expectCache: boolean) {
  const started = performance.now();
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  const seconds = (performance.now() - started) / 1000;
  const log = await deploymentLog(daemon, appId, result.id);
  if (result.state !== 'OK') throw new Error(`deployment ${result.id} ended ${result.state}:\n${log.join('\n')}`);
  const cacheLine = expectCache ? 'A build cache exists for this toolchain: reusing it.' : 'No build cache for this toolchain: performing a full build.';
  if (!log.includes(cacheLine)) throw new Error(`deployment ${result.id} did not log "${cacheLine}":\n${log.join('\n')}`);
  const built = log.map((l) => /^Build succeeded in ([\d.]+) s$/.exec(l)).find(Boolean);
  if (!built) throw new Error(`deployment ${result.id} has no "Build succeeded in" line`);
  return { seconds, buildSeconds: Number(built[1]) };
}

export async function benchBuildCache(): Promise<BuildCacheResult> {
  const daemon = await startDaemon();
  try {
    const { gitEnv } = await registerSshKey(daemon);

    const warmup = checkoutExample('node-hello');
    const warmupId = await createApp(daemon, warmup, 'toolchain-warmup', { NODE_ENV: 'production' });
    await timedPush(daemon, warmup, warmupId, gitEnv, false);

    const dir = checkoutExample('node-cached');
    newRelease(dir, 'one');
    const appId = await createApp(daemon, dir, 'cached', { NODE_ENV: 'production' });
    const first = await timedPush(daemon, dir, appId, gitEnv, false);
    newRelease(dir, 'two');
    const second = await timedPush(daemon, dir, appId, gitEnv, true);
    const answer = await getThroughRouter(daemon, `${appId}.localhost`);
    if (answer.status !== 200 || JSON.parse(answer.body).release !== 'two') throw new Error(`the redeployed app answered ${answer.status} ${answer.body}`);

    return {
      firstSeconds: first.seconds,
      secondSeconds: second.seconds,
      ratio: second.seconds / first.seconds,
      firstBuildSeconds: first.buildSeconds,
      secondBuildSeconds: second.buildSeconds,
      buildRatio: second.buildSeconds / first.buildSeconds,
    };
  } finally {
    await daemon.stop();
  }
}

export function describeBuildCache(r: BuildCacheResult): string {
  return (
    `build cache (node-cached, npm, express tree): first deploy ${r.firstSeconds.toFixed(1)} s, redeploy with the same lockfile ${r.secondSeconds.toFixed(1)} s ` +
    `(${r.ratio.toFixed(2)}); build phase ${r.firstBuildSeconds.toFixed(1)} s vs ${r.secondBuildSeconds.toFixed(1)} s (${r.buildRatio.toFixed(2)})`
  );
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const r = await benchBuildCache();
  console.log(describeBuildCache(r));
  console.log(JSON.stringify(r));
}
