/**
 * After `sbt stage`: which staged script starts the app. Called by the pipeline once the build
 * succeeded, because the script's name is only known then.
 */
import { access, constants, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PlanError } from '../plan.js';
import { HTTP_PORT_ARGUMENT } from './runtime.js';
import { readTargetVariables, realPathInside, stageBinDir, STAGE_BIN } from './target-paths.js';

function isWindowsScript(name: string): boolean {
  return name.toLowerCase().endsWith('.bat') || name.toLowerCase().endsWith('.cmd');
}

/** Staged scripts in a folder, sorted by name so "the first binary" is the same on every machine. */
async function listBinaries(buildDir: string, binDir: string): Promise<string[]> {
  const real = await realPathInside(buildDir, binDir, 'CC_SBT_TARGET_DIR');
  if (!real) return [];
  const entries = await readdir(real).catch(() => []);
  const found: string[] = [];
  for (const name of entries.sort()) {
    if (isWindowsScript(name) || name.startsWith('.')) continue;
    const inside = await realPathInside(buildDir, `${binDir}/${name}`, 'CC_SBT_TARGET_BIN').catch(() => undefined);
    if (inside && (await stat(inside)).isFile()) found.push(name);
  }
  return found;
}

/** Every `<module>/target/universal/stage/bin/<script>` up to two folders deep, to tell the user what exists. */
async function findStagedElsewhere(buildDir: string): Promise<string[]> {
  const found: string[] = [];
  async function visit(rel: string, depth: number): Promise<void> {
    for (const name of await listBinaries(buildDir, rel === '' ? STAGE_BIN : `${rel}/${STAGE_BIN}`).catch(() => [])) {
      found.push(`${rel === '' ? '' : rel + '/'}${STAGE_BIN}/${name}`);
    }
    if (depth === 0) return;
    const entries = await readdir(join(buildDir, rel), { withFileTypes: true }).catch(() => []);
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (!entry.isDirectory() || entry.name.startsWith('.') || ['target', 'project', 'src', 'node_modules'].includes(entry.name)) continue;
      await visit(rel === '' ? entry.name : `${rel}/${entry.name}`, depth - 1);
    }
  }
  await visit('', 2);
  return found;
}

async function isExecutable(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
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

  if (target.bin) {
    const real = await realPathInside(buildDir, `${binDir}/${target.bin}`, target.dir ? 'CC_SBT_TARGET_DIR/CC_SBT_TARGET_BIN' : 'CC_SBT_TARGET_BIN');
    if (real && (await stat(real)).isFile()) {
      if (!(await isExecutable(real))) {
        throw new PlanError(`${described} exists but is not executable.`, 'Stage the app with sbt-native-packager, which writes executable scripts.');
      }
      return `${binDir}/${target.bin}`;
    }
  } else {
    const binaries = await listBinaries(buildDir, binDir);
    for (const name of binaries) {
      if (await isExecutable(join(buildDir, binDir, name))) return `${binDir}/${name}`;
    }
  }

  const found = await findStagedElsewhere(buildDir);
  throw new PlanError(
    `No binary to start: ${described} ${target.bin ? 'does not exist' : 'holds no executable script (.bat files are ignored)'} after the build. ` +
      (found.length > 0 ? `Staged scripts found: ${found.join(', ')}.` : 'No staged script was found anywhere in the build (searched <module>/target/universal/stage/bin two folders deep).'),
    suggestion(found) + ' CC_SBT_TARGET_DIR is the module folder, CC_SBT_TARGET_BIN the script name.',
  );
}

/**
 * The start argv: the staged script with `-Dhttp.port=8080` (the script turns `-D` arguments
 * into JVM system properties), or CC_RUN_COMMAND run by `sh -c` as the user wrote it. With
 * CC_RUN_COMMAND the target variables must still designate an existing binary, as SPEC §2.2 says.
 */
export async function resolveSbtBinary(buildDir: string, env: Record<string, string>): Promise<string[]> {
  const binary = await findSbtBinary(buildDir, env);
  const runCommand = env.CC_RUN_COMMAND?.trim();
  if (runCommand) return ['sh', '-c', runCommand];
  return [`./${binary}`, HTTP_PORT_ARGUMENT];
}
