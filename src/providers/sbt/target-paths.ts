/**
 * Where the staged binary is: `<CC_SBT_TARGET_DIR>/target/universal/stage/bin/<CC_SBT_TARGET_BIN>`.
 * Both values come from the user, so they are checked twice: as text here (relative, no `..`),
 * and when the binary is looked up, through the build folder's untrusted tree (no link out of it).
 */
import { UntrustedTree } from '../../sandbox/untrusted-tree.js';
import { checkRelativePath } from '../../core/names.js';
import { PlanError } from '../plan.js';

export const STAGE_BIN = 'target/universal/stage/bin';

export interface TargetVariables {
  /** Normalised CC_SBT_TARGET_DIR ('' for the build root). */
  dir: string;
  /** CC_SBT_TARGET_BIN when set. */
  bin?: string;
}

export function checkTargetDir(value: string | undefined): string {
  if (value === undefined || value.trim() === '') return '';
  try {
    // Only spaces are trimmed: a control character (a pasted newline) is refused by the check.
    return checkRelativePath('CC_SBT_TARGET_DIR', value.replace(/^ +| +$/g, ''));
  } catch (error) {
    const e = error as Error & { hint?: string };
    throw new PlanError(
      e.message,
      `${e.hint ?? ''} CC_SBT_TARGET_DIR names the module folder, e.g. "web" for web/target/universal/stage/bin.`.trim(),
    );
  }
}

/** A file name only: the binary sits directly in the stage bin folder. */
export function checkTargetBin(value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const bin = value.replace(/^ +| +$/g, '');
  if (bin === '.' || bin === '..' || bin.includes('/') || bin.includes('\\') || /[\0-\x1f]/.test(bin) || bin.length > 255) {
    throw new PlanError(
      `CC_SBT_TARGET_BIN=${JSON.stringify(value)} is not a file name.`,
      'Give only the name of the script in <CC_SBT_TARGET_DIR>/target/universal/stage/bin, e.g. "web" (no "/" or "..").',
    );
  }
  if (bin.toLowerCase().endsWith('.bat')) {
    throw new PlanError(
      `CC_SBT_TARGET_BIN=${JSON.stringify(value)} is a Windows script.`,
      `Name the Unix script beside it: ${JSON.stringify(bin.slice(0, -4))}.`,
    );
  }
  return bin;
}

export function readTargetVariables(env: Record<string, string | undefined>): TargetVariables {
  return { dir: checkTargetDir(env.CC_SBT_TARGET_DIR), bin: checkTargetBin(env.CC_SBT_TARGET_BIN) };
}

/** The stage bin folder relative to the build folder, with `/` separators. */
export function stageBinDir(dir: string): string {
  return dir === '' ? STAGE_BIN : `${dir}/${STAGE_BIN}`;
}

/** The build folder once the build ran, where the staged scripts are looked up (as root). */
export function builtTree(buildDir: string): UntrustedTree {
  return new UntrustedTree(buildDir, { name: 'the build folder' });
}
