/**
 * Every benchmark in one run: `./dev bench` (or `node --import tsx bench/run.ts`).
 * Each prints its figures and a ratio against a baseline measured in the same run.
 */
import { benchRouter } from './router.js';
import { benchPushToLive, describeRedeploys } from './push-to-live.js';
import { benchSbtBuild, describeSbtBuild } from './sbt-build.js';
import { benchBuildCache, describeBuildCache } from './build-cache.js';
import { benchSandbox, describeSandbox } from './sandbox.js';
import { benchStartCommand, describeStartCommand } from './start-command.js';
import { benchResilience, describeResilience } from './resilience.js';
import { benchDrains, describeDrains } from './drains.js';
import { benchBackups, describeBackups } from './backups.js';
import { benchBuildLoad, describeBuildLoad } from './build-load.js';
import { benchAddonIdle, describeAddonIdle } from './addon-idle.js';
import { benchExclusiveVolume, describeExclusiveVolume } from './exclusive-volume.js';
import { benchAutoscaling, describeAutoscaling, SCALA_APP } from './autoscaling.js';
import { benchFsBuckets, describeFsBuckets } from './fs-buckets.js';
import { benchScaleToZero, describeScaleToZero } from './scale-to-zero.js';

const results: Record<string, unknown> = {};

const router = await benchRouter();
results.router = router;
console.log(
  `router (haproxy) vs direct, loopback hello world: ${router.routed.requestsPerSecond.toFixed(0)} / ${router.direct.requestsPerSecond.toFixed(0)} req/s = ${router.ratio.toFixed(2)} ` +
    `(target >= 0.55); vs nginx as before: ${router.nginx.requestsPerSecond.toFixed(0)} req/s, haproxy/nginx ${router.overNginx.toFixed(2)}; ` +
    `p99 ${router.routed.p99Ms.toFixed(2)} / direct ${router.direct.p99Ms.toFixed(2)} / nginx ${router.nginx.p99Ms.toFixed(2)} ms`,
);

const push = await benchPushToLive();
results.pushToLive = push;
console.log(
  `push-to-live: cold toolchain ${push.coldSeconds.toFixed(1)} s, warm ${push.warmSeconds.toFixed(1)} s (warm/cold ${push.warmOverCold.toFixed(2)})`,
);
console.log(describeRedeploys(push));
console.log(
  `deployed instance through the router vs direct: ${push.routed.requestsPerSecond.toFixed(0)} / ${push.direct.requestsPerSecond.toFixed(0)} req/s = ${push.routerRatio.toFixed(2)}; ` +
    `p99 ${push.routed.p99Ms.toFixed(1)} ms vs ${push.direct.p99Ms.toFixed(1)} ms`,
);

const sandbox = await benchSandbox();
results.sandbox = sandbox;
console.log(describeSandbox(sandbox));

const startCommand = await benchStartCommand();
results.startCommand = startCommand;
console.log(describeStartCommand(startCommand));

const buildCache = await benchBuildCache();
results.buildCache = buildCache;
console.log(describeBuildCache(buildCache));

const resilience = await benchResilience();
results.resilience = resilience;
console.log(describeResilience(resilience));

const drains = await benchDrains();
results.drains = drains;
console.log(describeDrains(drains));

const backups = await benchBackups();
results.backups = backups;
console.log(describeBackups(backups));

const exclusiveVolume = await benchExclusiveVolume();
results.exclusiveVolume = exclusiveVolume;
console.log(describeExclusiveVolume(exclusiveVolume));

const fsBuckets = await benchFsBuckets();
results.fsBuckets = fsBuckets;
console.log(describeFsBuckets(fsBuckets));

const autoscaling = await benchAutoscaling();
results.autoscaling = autoscaling;
console.log(describeAutoscaling(autoscaling));
const autoscalingScala = await benchAutoscaling(SCALA_APP);
results.autoscalingScala = autoscalingScala;
console.log(describeAutoscaling(autoscalingScala));

const scaleToZero = await benchScaleToZero();
results.scaleToZero = scaleToZero;
console.log(describeScaleToZero(scaleToZero));

const addonIdle = await benchAddonIdle();
results.addonIdle = addonIdle;
console.log(describeAddonIdle(addonIdle));

const buildLoad = await benchBuildLoad();
results.buildLoad = buildLoad;
console.log(describeBuildLoad(buildLoad));

const sbtBuild = await benchSbtBuild();
results.sbtBuild = sbtBuild;
console.log(describeSbtBuild(sbtBuild));

console.log(JSON.stringify(results));
