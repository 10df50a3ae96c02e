/**
 * After `sbt stage`: which staged script starts the app. Called by the pipeline once the build
 * succeeded, because the script's name is only known then.
 */
import { RefusedPathError, type UntrustedTree } from '../../sandbox/untrusted-tree.js';
import { PlanError } from '../plan.js';
import { HTTP_PORT_ARGUMENT } from './runtime.js';
import { builtTree, readTargetVariables, stageBinDir, STAGE_BIN } from './target-paths.js';

function isWindowsScript(name: string): boolean {
  return name.toLowerCase().endsWith('.bat') || name.toLowerCase().endsWith('.cmd');
}

/** A regular file of the build (links inside followed) with an execute bit. */
async function isExecutableFile(tree: UntrustedTree, path: string): Promise<boolean> {
  const entry = await tree.entry(path);
  return entry?.kind === 'file' && (entry.mode & 0o111) !== 0;
}

/**
 * Staged scripts in a folder, sorted by name so "the first binary" is the same on every machine.
 * A folder leading out of the build is refused; a script that is a link out of it is skipped.
 */
async function listBinaries(tree: UntrustedTree, binDir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await tree.list(binDir)) {
    if (isWindowsScript(entry.name) || entry.name.startsWith('.')) continue;
    const kind = await tree.entry(`${binDir}/${entry.name}`).then(
      (e) => e?.kind,
      (error: unknown) => {
        if (error instanceof RefusedPathError) return undefined;
        throw error;
      },
    );
    if (kind === 'file') found.push(entry.name);
  }
  return found;
}

/** Every `<module>/target/universal/stage/bin/<script>` up to two folders deep, to tell the user what exists. */
async function findStagedElsewhere(tree: UntrustedTree): Promise<string[]> {
  const found: string[] = [];
  async function visit(rel: string, depth: number): Promise<void> {
    for (const name of await listBinaries(tree, rel === '' ? STAGE_BIN : `${rel}/${STAGE_BIN}`).catch(() => [])) {
      found.push(`${rel === '' ? '' : rel + '/'}${STAGE_BIN}/${name}`);
    }
    if (depth === 0) return;
    // Real folders only: a link is not visited.
    for (const entry of await tree.list(rel).catch(() => [])) {
      if (entry.kind !== 'folder' || entry.name.startsWith('.') || ['target', 'project', 'src', 'node_modules'].includes(entry.name))
        continue;
      await visit(rel === '' ? entry.name : `${rel}/${entry.name}`, depth - 1);
    }
  }
  await visit('', 2);
  return found;
}

function suggestion(found: string[]): string {
  const example = found.find((f) => f.includes('/')) ?? found[0];
  const match = example ? /^(?:(.+)\/)?target\/universal\/stage\/bin\/([^/]+)$/.exec(example) : null;
  if (!match) {
    return (
      'Make sure the goal stages the app (sbt-native-packager with JavaAppPackaging enabled), or for a multi-module build set ' +
      'SBT_DEPLOY_GOAL=<module>/stage, CC_SBT_TARGET_DIR=<module> and CC_SBT_TARGET_BIN=<script name>.'
    );
  }
  const [, dir, bin] = match;
  return dir
    ? `Set CC_SBT_TARGET_DIR=${dir} and CC_SBT_TARGET_BIN=${bin} (and SBT_DEPLOY_GOAL=${dir}/stage if the root has no stage task).`
    : `Set CC_SBT_TARGET_BIN=${bin} to start that script, or fix CC_SBT_TARGET_DIR/CC_SBT_TARGET_BIN.`;
}

/** The staged script's path relative to the build folder (checked to exist, be executable and stay inside). */
export async function findSbtBinary(buildDir: string, env: Record<string, string | undefined>): Promise<string> {
  const target = readTargetVariables(env);
  const binDir = stageBinDir(target.dir);
  const described = target.bin ? `${binDir}/${target.bin}` : `${binDir}/`;
  const tree = builtTree(buildDir);

  if (target.bin) {
    const entry = await tree.entry(`${binDir}/${target.bin}`);
    if (entry?.kind === 'file') {
      if ((entry.mode & 0o111) === 0) {
        throw new PlanError(
          `${described} exists but is not executable.`,
          'Stage the app with sbt-native-packager, which writes executable scripts.',
        );
      }
      return `${binDir}/${target.bin}`;
    }
  } else {
    for (const name of await listBinaries(tree, binDir)) {
      if (await isExecutableFile(tree, `${binDir}/${name}`)) return `${binDir}/${name}`;
    }
  }

  const found = await findStagedElsewhere(tree);
  throw new PlanError(
    `No binary to start: ${described} ${target.bin ? 'does not exist' : 'holds no executable script (.bat files are ignored)'} after the build. ` +
      (found.length > 0
        ? `Staged scripts found: ${found.join(', ')}.`
        : 'No staged script was found anywhere in the build (searched <module>/target/universal/stage/bin two folders deep).'),
    suggestion(found) + ' CC_SBT_TARGET_DIR is the module folder, CC_SBT_TARGET_BIN the script name.',
  );
}

/**
 * The start argv: the staged script with `-Dhttp.port=8080` (the script turns `-D` arguments
 * into JVM system properties), or CC_RUN_COMMAND run by `sh -c` as the user wrote it. With
 * CC_RUN_COMMAND the target variables must still designate an existing binary, as docs/behaviour.md (Scala variables) says.
 */
export async function resolveSbtBinary(buildDir: string, env: Record<string, string>): Promise<string[]> {
  const binary = await findSbtBinary(buildDir, env);
  const runCommand = env.CC_RUN_COMMAND?.trim();
  if (runCommand) return ['sh', '-c', runCommand];
  return [`./${binary}`, HTTP_PORT_ARGUMENT];
}
