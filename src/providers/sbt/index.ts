/**
 * The sbt provider. A pipeline uses it in four steps:
 *   1. `sbtProvider.plan(context)`            -> a BuildPlan with `${SLIPWAY_...}` path tokens
 *   2. `prepareSbtPlan(plan, { toolchainCacheDir, appCacheDir })` -> build argv ready to run
 *   3. run `plan.build` (stdin closed); on failure print `explainSbtFailure(outputLines)` if not null
 *   4. `resolveSbtBinary(buildDir, env)`      -> the start argv (replaces `plan.start.argv`)
 */
export { sbtProvider, planSbt } from './sbt-provider.js';
export { prepareSbtPlan, type SbtPrepareOptions } from './prepare.js';
export { resolveSbtBinary, findSbtBinary } from './resolve-binary.js';
export { explainSbtFailure } from './explain-failure.js';
export { PLACEHOLDER, fillPlaceholders, hasPlaceholder } from './placeholders.js';
export { sbtBuildArgv, sbtCacheFolders, SBT_JVM_OPTIONS } from './build-command.js';
export { parseDeployGoal, DEFAULT_GOAL } from './deploy-goal.js';
export { DEFAULT_SBT_VERSION, sbtVersionFromProperties, chooseSbtVersion } from './build-properties.js';
export { HTTP_PORT_ARGUMENT, httpPortVariables } from './runtime.js';
