import { createHash } from 'node:crypto';
import type { BuildPlan } from '../providers/plan.js';
import { RefusedPathError, type UntrustedTree } from '../sandbox/untrusted-tree.js';

/**
 * One digest of everything the plan's skippable install commands (PlanCommand.skipWhenUnchanged)
 * read: the commands themselves (argv, variables, folder), the settings they name, the bytes
 * of the files they name (or their absence), the files the plan writes before the build and
 * the toolchain. Undefined when the plan has no such command, or nothing the install writes
 * is kept for the release, or a named file is not a plain file of the repository (refused
 * here means: install as usual, where the refusal is reported).
 */
export async function installInputsDigest(plan: BuildPlan, repository: UntrustedTree): Promise<string | undefined> {
  const commands = plan.build.filter((command) => command.skipWhenUnchanged !== undefined);
  if (commands.length === 0 || (plan.cacheDirsInRelease ?? []).length === 0) return undefined;
  const hash = createHash('sha256');
  const add = (part: unknown) => hash.update(`${JSON.stringify(part)}\n`);
  add(plan.toolchain.map((tool) => `${tool.name} ${tool.version}`));
  add(plan.env);
  for (const file of plan.files) add([file.path, file.mode ?? null, createHash('sha256').update(file.content).digest('hex')]);
  try {
    for (const command of commands) {
      add([command.argv, command.env ?? {}, command.cwd ?? '', command.skipWhenUnchanged!.settings]);
      for (const path of command.skipWhenUnchanged!.files) add([path, (await repository.sha256(path)) ?? 'absent']);
    }
  } catch (error) {
    if (error instanceof RefusedPathError) return undefined;
    throw error;
  }
  return hash.digest('hex');
}
