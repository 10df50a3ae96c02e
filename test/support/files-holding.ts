import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

/**
 * The files under `paths` (folders searched whole, binary files and sparse images read to the
 * end) that hold any of `values`, found by one pass of grep: reading the data folder and an
 * app's filesystem image once per secret made these checks the costliest part of their tests.
 */
export function filesHoldingAny(paths: string | string[], values: readonly string[]): string[] {
  assert.ok(values.length > 0, 'no value to look for');
  const patterns = values.flatMap((value) => ['-e', value]);
  const grep = spawnSync('grep', ['-rlaF', ...patterns, '--', ...[paths].flat()], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.ok(grep.status === 0 || grep.status === 1, `grep failed: ${grep.stderr}`);
  return grep.stdout.split('\n').filter(Boolean);
}
