/**
 * The sbt provider. The pipeline uses it through the Provider interface (../plan.ts), in four steps:
 *   1. `plan(context)`                 -> a BuildPlan with `${SLIPWAY_...}` path tokens
 *   2. `prepare(plan, context)`        -> build argv ready to run (prepareSbtPlan), the JDK on PATH
 *      (`preview(plan, context)` fills the same paths without fetching, for `slipway plan`)
 *   3. run `plan.build` (stdin closed); on failure `explainFailure(outputLines)` (explainSbtFailure)
 *   4. `resolveStart(buildDir, ...)`   -> the start argv (resolveSbtBinary replaces the token)
 */
export { sbtProvider, planSbt } from './sbt-provider.js';
export { prepareSbtPlan, previewSbtPlan, type SbtPrepareOptions } from './prepare.js';
export { resolveSbtBinary, findSbtBinary } from './resolve-binary.js';
export { explainSbtFailure } from './explain-failure.js';
export { PLACEHOLDER, fillPlaceholders, hasPlaceholder } from './placeholders.js';
export { sbtBuildArgv, sbtCacheFolders, SBT_JVM_OPTIONS } from './build-command.js';
export { parseDeployGoal, DEFAULT_GOAL } from './deploy-goal.js';
export { DEFAULT_SBT_VERSION, sbtVersionFromProperties, chooseSbtVersion } from './build-properties.js';
export { HTTP_PORT_ARGUMENT, httpPortVariables } from './runtime.js';
