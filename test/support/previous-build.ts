/**
 * The previous commit of this clone built like a release of slipway (its own dist/, this
 * clone's npm packages): what an upgrade starts from.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const REPO = process.env.SLIPWAY_REPO ?? new URL('../..', import.meta.url).pathname;

export function buildPreviousCommit(): { bin: string; commit: string } {
  return buildCommit('HEAD~1');
}

/** A given commit of this clone built the same way (an upgrade from an older release). */
export function buildCommit(revision: string): { bin: string; commit: string } {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-previous-'));
  const commit = execFileSync('git', ['rev-parse', '--short', revision], { cwd: REPO, encoding: 'utf8' }).trim();
  const archive = execFileSync('git', ['archive', '--format=tar', revision], { cwd: REPO, maxBuffer: 1 << 30 });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
  execFileSync(join(REPO, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: dir, stdio: 'inherit' });
  return { bin: join(dir, 'bin', 'slipway.js'), commit };
}
