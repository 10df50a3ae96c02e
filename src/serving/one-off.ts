import type { AppRow } from '../store/apps.js';
import type { Store } from '../store/store.js';
import type { SandboxHost, Sandbox } from '../sandbox/sandbox-host.js';
import type { SandboxPolicy } from '../sandbox/sandbox-identity.js';
import type { AppRuntime } from './app-runtime.js';
import type { BuildNetworks } from '../network/build-network.js';
import type { InstanceBackend } from '../instances/backend.js';
import { parseReleaseSpec } from './release-spec.js';
import { newId } from '../core/ids.js';
import { sandboxIdFor } from '../sandbox/describe.js';
import { releaseSandboxSpec } from '../sandbox/release-sandbox.js';
import { ConflictError, ValidationError } from '../core/errors.js';
import type { OneOffRuns } from './one-off-runs.js';

export interface OneOffDeps {
  store: Store;
  runtime: AppRuntime;
  sandboxes: SandboxPolicy;
  sandboxHost: SandboxHost;
  networks: BuildNetworks;
  /** The instances' backend: one that runs instances away from this machine runs the command there too. */
  instances?: Pick<InstanceBackend, 'runOnce'>;
  /** Every command running, by app: an app's deletion ends them. */
  runs?: OneOffRuns;
}

/** A command as the CLI sends it: a non-empty JSON array of strings. */
export function parseOneOffCommand(text: string | null): string[] {
  let argv: unknown;
  try {
    argv = JSON.parse(text ?? '');
  } catch {
    argv = undefined;
  }
  if (!Array.isArray(argv) || argv.length === 0 || argv.some((a) => typeof a !== 'string') || argv[0] === '') {
    throw new ValidationError('The command is a JSON array of strings, program first.', 'For example: slipway run -- node migrate.js');
  }
  return argv as string[];
}

/**
 * One-off commands (migrations, consoles, scripts): a fresh sandbox of the app's current
 * release, with its user, limits, environment and a network of its own (the outside and the
 * app's add-ons), never routed. Interactive: raw output and a standard input. With a backend
 * that runs instances elsewhere (Swarm), the command runs there, as a task of the release.
 */
export async function startOneOff(
  deps: OneOffDeps,
  app: AppRow,
  argv: string[],
  onData: (stream: 'out' | 'err', chunk: Buffer) => void,
): Promise<Sandbox> {
  const record = deps.store.deployments.release(app.id);
  if (!record)
    throw new ConflictError('This application has no release to run a command in.', 'Deploy it first with git push or `slipway deploy`.');
  const release = parseReleaseSpec(record.start_json);
  deps.runs?.checkOpen(app.id);
  const sandbox = await deps.sandboxes.instance(app);
  const id = newId('instance');
  const env = { ...deps.runtime.environmentFor(app, release, id, 0, sandbox.limits.memoryBytes), INSTANCE_TYPE: 'run' };
  if (deps.instances?.runOnce) {
    return tracked(
      deps,
      app,
      await deps.instances.runOnce({
        appId: app.id,
        deploymentId: release.deploymentId,
        releaseDir: release.releaseDir,
        ...(release.preRunLayer === undefined ? {} : { preRunLayer: release.preRunLayer }),
        command: argv,
        env,
        sandbox,
        onData,
      }),
    );
  }
  const network = await deps.networks.acquireBuildNetwork(app.id);
  let started: Sandbox;
  try {
    started = await deps.sandboxHost.start({
      id: sandboxIdFor(id, 'run'),
      limits: sandbox.limits,
      onLine: () => undefined,
      io: { onData },
      spec: releaseSandboxSpec({
        appId: app.id,
        releaseDir: release.releaseDir,
        preRunLayer: release.preRunLayer,
        sandbox,
        args: argv,
        env,
        hostname: 'run',
        networkNamespacePath: network.namespacePath,
      }),
    });
  } catch (error) {
    await network.release();
    throw error;
  }
  void started.done.finally(() => network.release());
  return tracked(deps, app, started);
}

/**
 * Kept among the app's running commands. Checked once more now that it runs: a deletion that
 * began while it was starting did not see it, so it is ended here.
 */
function tracked(deps: OneOffDeps, app: AppRow, started: Sandbox): Sandbox {
  if (!deps.runs) return started;
  deps.runs.track(app.id, started);
  try {
    deps.runs.checkOpen(app.id);
  } catch (error) {
    void started.signal('SIGKILL').catch(() => undefined);
    throw error;
  }
  return started;
}
