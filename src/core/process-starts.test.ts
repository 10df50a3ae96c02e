/**
 * Every child process goes through src/executor/ (argv in, lines or output and exit status
 * out, timeouts, group kill): no other module imports node:child_process, except the few listed
 * here with the reason they still start their own. Moving one into the executor removes it
 * from the list; a new one needs a reason here first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('..', import.meta.url));

/** Not yet through the executor, and why. */
const STILL_THEIR_OWN: Record<string, string> = {
  'router/haproxy/haproxy-router.ts': 'the engine runs under setpriv --pdeathsig and its stderr is read while it serves',
  'router/nginx/nginx-router.ts': 'the engine runs under setpriv --pdeathsig and its stderr is read while it serves',
  'cli/open-browser.ts': 'xdg-open is left running detached, the CLI does not wait for it',
  'instances/swarm/base-image.ts': 'the swarm backend builds its base image with mmdebstrap (not moved yet)',
  'instances/swarm/build-context.ts': 'the swarm backend streams a build context to docker (not moved yet)',
};

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
    'run these through src/executor/ (runCommand, runCaptured, runChecked, startServer)',
  );
  assert.deepEqual(
    Object.keys(STILL_THEIR_OWN).filter((file) => !starting.includes(file)),
    [],
    'these no longer start processes themselves: remove them from the list',
  );
});
