/**
 * The `sbt` provider (docs/behaviour.md: Runtimes, Scala variables, Scala builds): build with the real sbt
 * launcher, then start the script written by sbt-native-packager's `stage`.
 */
import { join } from 'node:path';
import { SBT_APP_TYPE } from '../app-types.js';
import { repositoryTree } from '../../sandbox/untrusted-tree.js';
import { selectJdk } from '../../toolchains/sbt/jdks.js';
import { PlanError, type BuildPlan, type PlanCommand, type PlanContext, type Provider } from '../plan.js';
import { chooseSbtVersion } from './build-properties.js';
import { explainSbtFailure } from './explain-failure.js';
import { prepareSbtPlan, previewSbtPlan } from './prepare.js';
import { resolveSbtBinary } from './resolve-binary.js';
import { PLACEHOLDER_PATHS, sbtBuildArgv } from './build-command.js';
import { buildHeap } from './build-heap.js';
import { runtimeHeapVariables } from './runtime-heap.js';
import { parseDeployGoal } from './deploy-goal.js';
import { PLACEHOLDER } from './placeholders.js';
import { moduleTargets, sbtKeptFolders } from './kept-folders.js';
import { inspectPackaging } from './project-checks.js';
import { HTTP_PORT_ARGUMENT, httpPortVariables } from './runtime.js';
import { readTargetVariables, stageBinDir } from './target-paths.js';

function checkRunCommand(value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (value.includes('\0')) {
    throw new PlanError('CC_RUN_COMMAND contains a NUL character.', 'Write the command as you would type it in a shell.');
  }
  return value.trim();
}

function startCommand(env: Record<string, string>): PlanCommand {
  const target = readTargetVariables(env);
  const runCommand = checkRunCommand(env.CC_RUN_COMMAND);
  if (runCommand) return { label: 'start (CC_RUN_COMMAND)', argv: ['sh', '-c', runCommand] };
  if (target.bin) {
    return { label: 'start staged binary', argv: [`./${stageBinDir(target.dir)}/${target.bin}`, HTTP_PORT_ARGUMENT] };
  }
  // The script's name is known only after `stage`: resolveSbtBinary replaces the token.
  return { label: 'start staged binary', argv: [PLACEHOLDER.stagedBinary, HTTP_PORT_ARGUMENT] };
}

export async function planSbt(context: PlanContext): Promise<BuildPlan> {
  const env = context.env;
  // Every file of the repository is read through it: links out of it are refused.
  const repository = repositoryTree(context.sourceDir);
  const sbt = await chooseSbtVersion(repository);
  const jdk = await selectJdk(env.CC_JAVA_VERSION);
  const goal = parseDeployGoal(env.SBT_DEPLOY_GOAL);
  const target = readTargetVariables(env);
  const start = startCommand(env);
  const heap = buildHeap(context.buildMemoryBytes, env);
  const warnings: string[] = [];
  const notes: string[] = [];

  const stages = goal.goals.some((g) => /(^|\/)stage$/.test(g));
  if (stages) {
    const facts = await inspectPackaging(repository);
    if (!facts.packagerPlugin) {
      warnings.push(
        'project/plugins.sbt does not mention sbt-native-packager, which provides the `stage` task: add ' +
          'addSbtPlugin("com.github.sbt" % "sbt-native-packager" % "<version>") to project/plugins.sbt.',
      );
    }
    if (!facts.javaAppPackaging) {
      warnings.push(
        'No build file enables JavaAppPackaging: add enablePlugins(JavaAppPackaging) to build.sbt (on the module with the main class).',
      );
    }
  }
  if (target.dir !== '' && goal.source === 'default') {
    warnings.push(
      `CC_SBT_TARGET_DIR=${target.dir} is set but SBT_DEPLOY_GOAL is not: if the root project has no stage task, ` +
        `set SBT_DEPLOY_GOAL=${target.dir}/stage.`,
    );
  }
  if (env.CC_RUN_COMMAND?.trim() && !target.bin) {
    warnings.push(
      'CC_RUN_COMMAND is set without CC_SBT_TARGET_BIN: CC_SBT_TARGET_DIR and CC_SBT_TARGET_BIN must still name the staged binary with a custom run command, so the first script in ' +
        `${stageBinDir(target.dir)} is checked before the command runs.`,
    );
  }

  notes.push(`sbt ${sbt.version}: ${sbt.reason}`);
  notes.push(
    `Java ${jdk.major} (${jdk.version}, ${jdk.javaHome}): ` +
      (env.CC_JAVA_VERSION?.trim() ? `CC_JAVA_VERSION=${env.CC_JAVA_VERSION.trim()}` : "the machine's default java"),
  );
  notes.push(heap.note);
  notes.push(`goal: ${goal.goals.join(' ')} (${goal.source === 'default' ? 'default stage task' : 'SBT_DEPLOY_GOAL'})`);
  notes.push(
    target.bin
      ? `start: ${stageBinDir(target.dir)}/${target.bin} (CC_SBT_TARGET_DIR/CC_SBT_TARGET_BIN)`
      : `start: the first script in ${stageBinDir(target.dir)} (not .bat), found after the build`,
  );
  notes.push(
    env.JAVA_OPTS === undefined
      ? `the JVM gets ${HTTP_PORT_ARGUMENT} (as an argument of the staged script and in JAVA_OPTS)`
      : `the JVM gets ${HTTP_PORT_ARGUMENT} as an argument of the staged script; the app's own JAVA_OPTS is kept as it is` +
          (env.CC_RUN_COMMAND?.trim() ? ' (CC_RUN_COMMAND must pass http.port itself)' : ''),
  );
  notes.push("sbt's boot, ivy, coursier and global folders live in the app's cache folder and persist between builds");
  const kept = sbtKeptFolders(await moduleTargets(repository), target.dir);
  notes.push(
    `sbt's incremental state is kept between builds: ${kept.cacheDirs.join(', ')} (discarded when the sbt version or the JDK changes; ` +
      `${kept.cacheDirsInRelease.join(', ')} stay in the release too, copied after a successful build)`,
  );

  return {
    provider: 'sbt',
    toolchain: [
      { name: 'sbt', version: sbt.version, reason: sbt.reason },
      { name: 'java', version: String(jdk.major), reason: env.CC_JAVA_VERSION?.trim() ? 'CC_JAVA_VERSION' : "machine's default java" },
    ],
    env: { JAVA_HOME: jdk.javaHome, ...httpPortVariables(env) },
    files: [],
    build: [
      {
        label: `sbt ${goal.goals.join(' ')}`,
        argv: sbtBuildArgv(goal.goals, { java: join(jdk.javaHome, 'bin', 'java'), heap: heap.options, ...PLACEHOLDER_PATHS }),
      },
    ],
    beforeStart: [],
    start,
    // sbt's download caches are addressed through ${SLIPWAY_APP_CACHE}, outside the build
    // folder; these are the build's own compiled state.
    ...kept,
    cacheKeyInputs: [`sbt ${sbt.version}`, `java ${jdk.version}${jdk.implementor ? ` (${jdk.implementor})` : ''}`],
    warnings,
    notes,
  };
}

export const sbtProvider: Provider = {
  name: SBT_APP_TYPE.name,
  label: SBT_APP_TYPE.label,
  async detect(sourceDir: string): Promise<boolean> {
    // A build.sbt that is a link out of the repository is refused here, by name.
    const repository = repositoryTree(sourceDir);
    return (await repository.entry('build.sbt')) !== undefined || (await repository.entry('project/build.properties')) !== undefined;
  },
  notDetected() {
    return {
      message: 'This is an sbt application but the commit has no build.sbt or project/build.properties at the repository root.',
      hint: 'Commit them, or create the application with the right --type.',
    };
  },
  plan: planSbt,
  async prepare(plan, context) {
    const prepared = await prepareSbtPlan(plan, context);
    // The JDK the plan chose runs sbt and the app: its java comes first on PATH.
    return { plan: prepared, toolPath: plan.env.JAVA_HOME ? [join(plan.env.JAVA_HOME, 'bin')] : [] };
  },
  preview: previewSbtPlan,
  // The staged script is named by the build: found in the build folder once it has run.
  resolveStart: (buildDir, _plan, env) => resolveSbtBinary(buildDir, env),
  explainFailure: (outputLines) => explainSbtFailure(outputLines) ?? undefined,
  runtimeEnv: runtimeHeapVariables,
};
