/**
 * sbt build caches: push-to-live of examples/scala-single on a fresh daemon, first with an
 * empty app cache (sbt, Scala, the plugins and the dependencies are all downloaded and the
 * build definition compiled), then for a new commit of the same app, whose sbt caches
 * (boot, ivy, coursier, global) persisted in <data-dir>/cache/apps/<app>/sbt.
 * The sbt launcher jar sits in the shared toolchain cache; when it is not there yet the first
 * deploy fetches it too (the log says so, and the result records it). The first deploy of a
 * daemon also asks Maven once which repository this machine uses (some seconds, then kept).
 *
 *   node --import tsx bench/sbt-build.ts
 */
import { pathToFileURL } from 'node:url';
import { startDaemon, type TestDaemon } from '../test/support/daemon.js';
import { checkoutExample, createApp, deploymentLog, getThroughRouter, newRelease, pushAndWait, registerSshKey } from '../test/support/deploy.js';

export interface SbtBuildResult {
  /** git push to the app answering 200 through the router, empty app cache. */
  firstSeconds: number;
  /** The same, for a new commit with the caches of the first build. */
  secondSeconds: number;
  /** second / first, push to live. */
  ratio: number;
  /** "Build succeeded in" of each deployment's log: receive and build only. */
  firstBuildSeconds: number;
  secondBuildSeconds: number;
  /** second / first, build phase only. */
  buildRatio: number;
  /** The first deploy also fetched the sbt launcher into the toolchain cache. */
  launcherFetched: boolean;
}

async function timedDeploy(daemon: TestDaemon, dir: string, appId: string, gitEnv: NodeJS.ProcessEnv, release: string) {
  newRelease(dir, release);
  const started = performance.now();
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  const log = await deploymentLog(daemon, appId, result.id);
  if (result.state !== 'OK') throw new Error(`deployment ${result.id} ended ${result.state}:\n${log.join('\n')}`);
  for (;;) {
    const answer = await getThroughRouter(daemon, `${appId}.localhost`);
    if (answer.status === 200) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const seconds = (performance.now() - started) / 1000;
  const built = log.map((l) => /^Build succeeded in ([\d.]+) s$/.exec(l)).find(Boolean);
  if (!built) throw new Error(`deployment ${result.id} has no "Build succeeded in" line`);
  return { seconds, buildSeconds: Number(built[1]), log };
}

export async function benchSbtBuild(): Promise<SbtBuildResult> {
  const daemon = await startDaemon();
  try {
    const { gitEnv } = await registerSshKey(daemon);
    const dir = checkoutExample('scala-single');
    const appId = await createApp(daemon, dir, 'scala-bench', { GREETING: 'bench' }, 'sbt');
    const first = await timedDeploy(daemon, dir, appId, gitEnv, 'one');
    if (!first.log.some((l) => l.includes('[launcher] getting org.scala-sbt sbt'))) {
      throw new Error('the first build did not fetch sbt: its app cache was not empty');
    }
    const second = await timedDeploy(daemon, dir, appId, gitEnv, 'two');
    const refetched = second.log.filter((l) => l.includes('[launcher] getting'));
    if (refetched.length > 0) throw new Error(`the second build fetched again:\n${refetched.join('\n')}`);
    return {
      firstSeconds: first.seconds,
      secondSeconds: second.seconds,
      ratio: second.seconds / first.seconds,
      firstBuildSeconds: first.buildSeconds,
      secondBuildSeconds: second.buildSeconds,
      buildRatio: second.buildSeconds / first.buildSeconds,
      launcherFetched: first.log.some((l) => /^sbt launcher [\d.]+: fetching /.test(l)),
    };
  } finally {
    await daemon.stop();
  }
}

export function describeSbtBuild(r: SbtBuildResult): string {
  return (
    `sbt build caches (scala-single): first deploy (empty app cache${r.launcherFetched ? ', launcher fetched' : ''}) ${r.firstSeconds.toFixed(1)} s, ` +
    `new commit with warm caches ${r.secondSeconds.toFixed(1)} s (${r.ratio.toFixed(2)}); ` +
    `build phase ${r.firstBuildSeconds.toFixed(1)} s vs ${r.secondBuildSeconds.toFixed(1)} s (${r.buildRatio.toFixed(2)})`
  );
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const r = await benchSbtBuild();
  console.log(describeSbtBuild(r));
  console.log(JSON.stringify(r));
}
