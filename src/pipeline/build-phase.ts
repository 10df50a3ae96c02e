import { mkdir, rm } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { AppRow } from '../store/apps.js';
import type { Deployment } from '../store/deployments.js';
import type { BuildPlan, PlanCommand, PlanFile, Provider, VersionCatalog } from '../providers/plan.js';
import { FixableError, PlanError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { describePlan, formatArgv } from '../providers/describe-plan.js';
import { describeExit } from '../executor/run-command.js';
import type { SandboxIdentity } from '../sandbox/sandbox-identity.js';
import type { BuildNetwork, BuildNetworks } from '../network/build-network.js';
import { describeSandboxExit, sandboxIdFor } from '../sandbox/describe.js';
import type { SandboxStart } from '../sandbox/sandbox-host.js';
import { repositoryTree, UntrustedTree } from '../sandbox/untrusted-tree.js';
import { cronJobsOfBuild } from '../cron/build-check.js';
import { BuildCache, refuseCommittedLink } from './build-cache.js';
import { type BuildSshKey, explainGitSshRefusal, installBuildSshKey } from './build-ssh-key.js';
import type { DeployLayout } from '../storage/deploy-layout.js';
import type { DeployRunner } from './deploy-runner.js';
import { describeRunHooks, withBuildHooks } from './hooks.js';
import { composeEnv, injectedEnv, withoutBuildOnlyVariables } from '../core/injected-env.js';
import { installInputsDigest } from './install-inputs.js';
import { DeploymentCancelled, PhaseError } from '../core/phase-error.js';
import { prepareToolchain } from './prepare-toolchain.js';
import type { ReleaseSpec } from '../serving/release-spec.js';

/** What the build phase needs of the platform, given once by the Deployer. */
export interface BuildPhaseDeps {
  runner: DeployRunner;
  layout: DeployLayout;
  providers: ReadonlyMap<string, Provider>;
  catalog: VersionCatalog;
  toolchainCacheDir: string;
  /** A network namespace of its own for each build (outbound access only). */
  buildNetworks: BuildNetworks;
  gatewayAddress: string;
  trustedProxies?: readonly string[];
  /** The machine's network settings for builds (proxies, certificate authorities, npm registry). */
  machineEnv: Record<string, string>;
  /** Refuses (throws an error with a message and a hint) cron jobs past the organisation's quota. */
  checkCronJobs?(app: AppRow, jobs: number): void;
}

/** One build: the commit is already exported into the app's build folder. */
export interface BuildInput {
  app: AppRow;
  deployment: Deployment;
  appVars: Record<string, string>;
  /** The app's build sandbox: its user, its build flavour's limits. */
  sandbox: SandboxIdentity;
  log(line: string, stream?: string): void;
  signal: AbortSignal;
}

/** A built release, before its folder gets its final name. */
export type BuiltRelease = Omit<ReleaseSpec, 'releaseDir'>;

/** How long one build step may run. */
const STEP_TIMEOUT_MS = 30 * 60_000;
/** Lines of a step's output kept for a provider to explain its failure. */
const KEPT_OUTPUT_LINES = 400;

/**
 * The build phase: the plan is made and printed, its tools fetched, the caches restored, its
 * commands run one by one in sandboxes (an install whose inputs did not change is skipped), the
 * caches saved, and the start command resolved. Returns the release, as the release phase
 * records it; a failure is a PhaseError('build') with a hint, a cancellation DeploymentCancelled.
 */
export async function buildRelease(deps: BuildPhaseDeps, input: BuildInput): Promise<BuiltRelease> {
  const { app, deployment, appVars, sandbox, log } = input;
  const buildDir = deps.layout.buildFolder(app.id);
  const provider = await detectedProvider(deps, app, buildDir);
  // Before anything runs: a cron.json that is not valid fails the build at once.
  const cron = await cronJobsOfBuild(buildDir, sandbox.user, (line) => log(line));
  checkCronQuota(deps, app, cron.length);
  const { plan, toolPath } = await preparedPlan(deps, provider, input);
  const cache = new BuildCache(deps.layout.appCacheFolder(app.id));
  const folder = await prepareBuildFolder(deps, cache, plan, input);
  const env = buildEnvironment(deps, input, plan, toolPath);
  const secretFiles = plan.files.filter((f) => f.secret);
  try {
    await runBuild(
      deps,
      { ...input, provider, env, secretFiles, commands: plan.build.filter((command) => !folder.skipped.includes(command)) },
      (built) => cache.save(plan, buildDir, built, folder.installInputs),
    );
  } finally {
    // The empty files the credentials were mounted over.
    for (const file of secretFiles) await folder.repository.remove(file.path);
  }
  return {
    deploymentId: deployment.id,
    commit: deployment.commit_sha,
    provider: plan.provider,
    start: await startCommand(provider, buildDir, plan, appVars, log),
    beforeStart: plan.beforeStart.map((c) => c.argv),
    // The release record keeps one environment for the instance's processes: the start
    // command's own variables (script shell, pnpm's no-install-before-run) must not be lost.
    planEnv: { ...plan.env, ...plan.start.env },
    toolPath,
    cron,
  };
}

/** Before anything runs: the release's cron jobs within the organisation's cron-jobs quota (docs/behaviour.md, Quotas). */
function checkCronQuota(deps: BuildPhaseDeps, app: AppRow, jobs: number): void {
  try {
    deps.checkCronJobs?.(app, jobs);
  } catch (error) {
    if (!(error instanceof FixableError)) throw error;
    throw new PhaseError('build', `clevercloud/cron.json: ${error.message}`, error.hint);
  }
}

/** The app type's provider, which must recognise the commit. */
async function detectedProvider(deps: BuildPhaseDeps, app: AppRow, buildDir: string): Promise<Provider> {
  const provider = deps.providers.get(app.type);
  if (!provider) throw new PhaseError('build', `No build provider for application type ${app.type}.`);
  if (!(await provider.detect(buildDir))) {
    const help = provider.notDetected();
    throw new PhaseError('build', help.message, help.hint);
  }
  return provider;
}

/**
 * The provider's plan with the build hooks, its tools fetched and every path filled in, then
 * printed: what the deploy log shows is what runs.
 */
async function preparedPlan(deps: BuildPhaseDeps, provider: Provider, input: BuildInput): Promise<{ plan: BuildPlan; toolPath: string[] }> {
  const { app, appVars, sandbox, log } = input;
  const made = await asBuildFailure(() =>
    provider.plan({
      sourceDir: deps.layout.buildFolder(app.id),
      appType: app.type,
      env: appVars,
      catalog: deps.catalog,
      buildMemoryBytes: sandbox.limits.memoryBytes,
    }),
  );
  const appCacheDir = deps.layout.appCacheFolder(app.id);
  await deps.runner.ownFolder(appCacheDir, sandbox.user);
  await mkdir(deps.layout.buildHome(app.id), { recursive: true });
  const prepared = await prepareToolchain(withBuildHooks(made, appVars), provider, {
    toolchainCacheDir: deps.toolchainCacheDir,
    appCacheDir,
    log: (l) => log(l),
  });
  log('==> [build] Build plan');
  for (const line of describePlan(prepared.plan)) log(`    ${line}`);
  for (const line of describeRunHooks(appVars)) log(`    ${line}`);
  return prepared;
}

/**
 * The build folder as the steps find it: the caches moved in, the plan's files written, the
 * whole of it and the app's cache folder handed to the app's user. Says which install steps
 * can be skipped (their inputs did not change since a successful build made what the cache
 * holds) and the digest of those inputs, for the cache to record after the build.
 */
async function prepareBuildFolder(
  deps: BuildPhaseDeps,
  cache: BuildCache,
  plan: BuildPlan,
  { app, sandbox, log }: BuildInput,
): Promise<{ skipped: PlanCommand[]; installInputs: string | undefined; repository: UntrustedTree }> {
  const buildDir = deps.layout.buildFolder(app.id);
  // Through the untrusted tree: a link, fifo or folder committed at a generated file's name
  // (`.npmrc -> /etc/...`) is replaced or refused, never written through.
  // The cache first: it refuses a committed `.slipway-cache` link before anything is written.
  log(
    (await cache.restore(plan, buildDir))
      ? 'A build cache exists for this toolchain: reusing it.'
      : 'No build cache for this toolchain: performing a full build.',
  );
  const repository = repositoryTree(buildDir, sandbox.user);
  // Before the plan's files are written: the digest takes them from the plan.
  const installInputs = await installInputsDigest(plan, repository);
  const skipped = (await cache.installUnchanged(plan, buildDir, installInputs)) ? plan.build.filter((c) => c.skipWhenUnchanged) : [];
  if (skipped.length > 0) {
    log(
      `${(plan.cacheDirsInRelease ?? []).join(', ')} kept from a build with the same package files, lockfile, settings and tool versions: ` +
        `${skipped.map((command) => command.label).join(', ')} skipped.`,
    );
  }
  await writePlanFiles(plan, repository, log);
  for (const path of [buildDir, deps.layout.appCacheFolder(app.id)]) {
    const result = await deps.runner.handOver(path, sandbox.user);
    if (result.exitCode !== 0) throw new PhaseError('build', `Could not hand ${path} to the build user (${describeExit(result)}).`);
  }
  return { skipped, installInputs, repository };
}

/** The build steps' variables: the machine's and the app's, the plan's, the platform's, the tools first on PATH. */
function buildEnvironment(deps: BuildPhaseDeps, { app, deployment, appVars }: BuildInput, plan: BuildPlan, toolPath: string[]) {
  const buildDir = deps.layout.buildFolder(app.id);
  return composeEnv({
    app: { ...deps.machineEnv, ...withoutBuildOnlyVariables(appVars) },
    plan: plan.env,
    injected: injectedEnv({
      appId: app.id,
      appName: app.name,
      deploymentId: deployment.id,
      commit: deployment.commit_sha,
      instanceId: newId('instance'),
      instanceNumber: 0,
      instanceType: 'build',
      appHome: buildDir,
      reverseProxyIps: [deps.gatewayAddress, ...(deps.trustedProxies ?? [])],
    }),
    toolPath,
    home: deps.layout.buildHome(app.id),
  });
}

/**
 * Runs the commands with what only the build may have: its credentials (CC_SSH_PRIVATE_KEY and
 * the plan's secret files, on the credentials tmpfs, each secret file mounted read-only over
 * its empty stand-in in the build folder) and a network namespace of its own. Both are gone
 * afterwards, whatever happened; `afterwards` (the cache saved) runs last, told whether the
 * build succeeded.
 */
async function runBuild(
  deps: BuildPhaseDeps,
  input: BuildInput & { provider: Provider; env: Record<string, string>; commands: PlanCommand[]; secretFiles: PlanFile[] },
  afterwards: (built: boolean) => Promise<void>,
): Promise<void> {
  const { app, sandbox, appVars, log, commands, secretFiles } = input;
  const buildDir = deps.layout.buildFolder(app.id);
  const appCacheDir = deps.layout.appCacheFolder(app.id);
  const secretsDir = deps.layout.buildSecretsFolder(app.id);
  await deps.runner.ownFolder(secretsDir, sandbox.user);
  let built = false;
  let sshKey: BuildSshKey | undefined;
  let network: BuildNetwork | undefined;
  try {
    sshKey = await installBuildSshKey({ appVars, home: secretsDir, user: sandbox.user, log });
    const secretMounts = await writeSecretFiles(secretFiles, secretsDir, buildDir, sandbox.user);
    // Nothing left to run (the install skipped, no hook): no build network to set up.
    network = commands.length > 0 ? await deps.buildNetworks.acquireBuildNetwork(app.id) : undefined;
    const mounts = [
      { destination: buildDir, source: buildDir, writable: true },
      ...secretMounts,
      { destination: appCacheDir, source: appCacheDir, writable: true },
      { destination: secretsDir, source: secretsDir, writable: false },
      ...sandbox.readOnlyPaths.map((p) => ({ destination: p, source: p, writable: false })),
    ];
    if (network)
      await runBuildCommands(deps.runner, commands, { ...input, buildDir, env: { ...input.env, ...sshKey.env }, mounts, network });
    built = true;
  } finally {
    await network?.release();
    await sshKey?.remove();
    await rm(secretsDir, { recursive: true, force: true });
    await afterwards(built);
  }
}

/** A PlanError of the provider (what the user must fix) fails the build phase with its hint. */
async function asBuildFailure<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof PlanError) throw new PhaseError('build', error.message, error.hint);
    throw error;
  }
}

/**
 * The plan's files in the build folder. A secret file is written there empty: its content goes
 * to the credentials tmpfs (writeSecretFiles), mounted over it while the build runs, so the
 * app's filesystem never holds a byte of it.
 */
async function writePlanFiles(plan: BuildPlan, repository: UntrustedTree, log: BuildInput['log']): Promise<void> {
  for (const file of plan.files) {
    // A generated file inside a folder (`.slipway-cache/config/.npmrc`): a committed link on
    // the way fails with what to remove; a link at the file itself is replaced by writeFile.
    if (file.path.includes('/')) await refuseCommittedLink(repository, posix.dirname(file.path));
    await repository.writeFile(file.path, file.secret ? '' : file.content, { mode: file.mode ?? (file.secret ? 0o600 : 0o644) });
    log(`Wrote ${file.path}${file.secret ? ' (secret: removed before the release starts)' : ''}`);
  }
}

/** The secret files' content on the credentials tmpfs, and the mounts that put each at its place in the build. */
async function writeSecretFiles(files: PlanFile[], secretsDir: string, buildDir: string, owner: SandboxIdentity['user']) {
  const secrets = new UntrustedTree(secretsDir, { name: "the build's credentials folder", owner, nextStep: 'then deploy again' });
  await secrets.makeFolder(SECRET_FILES_DIR, 0o700);
  return Promise.all(
    files.map(async (file, index) => {
      const name = `${SECRET_FILES_DIR}/${index}`;
      await secrets.writeFile(name, file.content, { mode: file.mode ?? 0o600 });
      return { destination: join(buildDir, file.path), source: join(secretsDir, name), writable: false };
    }),
  );
}

const SECRET_FILES_DIR = 'plan-files';

/** The plan's start command, or the one the provider finds in the built folder (sbt's staged script). */
async function startCommand(
  provider: Provider,
  buildDir: string,
  plan: BuildPlan,
  appVars: Record<string, string>,
  log: BuildInput['log'],
): Promise<string[]> {
  if (!provider.resolveStart) return plan.start.argv;
  const start = await asBuildFailure(() => provider.resolveStart!(buildDir, plan, appVars));
  if (formatArgv(start) !== formatArgv(plan.start.argv)) log(`Start command, found after the build: ${formatArgv(start)}`);
  return start;
}

/** The build commands, one sandbox each, in order; the first that fails ends the build. */
async function runBuildCommands(
  runner: DeployRunner,
  commands: PlanCommand[],
  context: BuildInput & {
    buildDir: string;
    env: Record<string, string>;
    mounts: SandboxStart['spec']['mounts'];
    network: BuildNetwork;
    provider: Provider;
  },
): Promise<void> {
  const { sandbox, signal, log, env } = context;
  // The last lines of every step so far: what a provider reads to explain a failure.
  const output: string[] = [];
  let step = 0;
  for (const command of commands) {
    log(`==> [build] ${command.label}: ${command.argv.join(' ')}`);
    const result = await runner.execute({
      id: sandboxIdFor(context.deployment.id, `s${step++}`),
      limits: sandbox.limits,
      onLine: (stream, line) => {
        output.push(line);
        if (output.length > KEPT_OUTPUT_LINES) output.shift();
        log(line, stream);
      },
      spec: {
        args: command.argv,
        env: { ...env, ...command.env },
        cwd: join(context.buildDir, command.cwd ?? ''),
        user: sandbox.user,
        hostname: 'build',
        mounts: context.mounts,
        networkNamespacePath: context.network.namespacePath,
        tmpBytes: Math.floor(sandbox.limits.memoryBytes / 4),
        openFiles: 16_384,
      },
      timeoutMs: STEP_TIMEOUT_MS,
      signal,
    });
    if (result.aborted) throw new DeploymentCancelled(String(signal.reason));
    if (result.exitCode !== 0) {
      if (result.outOfMemory) {
        throw new PhaseError(
          'build',
          `${command.label} ${describeSandboxExit(result, sandbox)}.`,
          'Give the build more memory with `slipway scale --build-flavor <name>` (a larger flavour), then redeploy.',
        );
      }
      const explanation = context.provider.explainFailure?.(output) ?? explainGitSshRefusal(output, env.GIT_SSH_COMMAND !== undefined);
      throw new PhaseError('build', `${command.label} ${describeExit(result)}.`, explanation ?? 'The output above shows the cause.');
    }
  }
}
