/**
 * Every child process goes through src/executor/ (argv in, lines or output and exit status
 * out, timeouts, group kill): no other module imports node:child_process. An exception would need
 * its reason in the list below first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('..', import.meta.url));

/**
 * Not through the executor, and why: empty, and meant to stay so. Extend the executor instead
 * (run-command, run-captured, start-server, start-attached, launch-detached, process-group).
 */
const STILL_THEIR_OWN: Record<string, string> = {};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return entry.endsWith('.ts') && !entry.endsWith('.test.ts') ? [path] : [];
  });
}

test('only the executor starts child processes, and the listed exceptions', () => {
  const starting = sourceFiles(SRC)
    .filter((file) => /from ['"]node:child_process['"]/.test(readFileSync(file, 'utf8')))
    .map((file) => relative(SRC, file))
    .filter((file) => !file.startsWith('executor/'));
  assert.deepEqual(
    starting.filter((file) => !(file in STILL_THEIR_OWN)),
    [],
    'run these through src/executor/ (runCommand, runCaptured, runChecked, startServer, startAttachedServer, launchDetached)',
  );
  assert.deepEqual(
    Object.keys(STILL_THEIR_OWN).filter((file) => !starting.includes(file)),
    [],
    'these no longer start processes themselves: remove them from the list',
  );
});
