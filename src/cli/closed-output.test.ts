import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs the CLI's main() from the sources as bin/slipway.js does, with stdout read or closed at once. */
function runCli(argv: string[], closeStdout: boolean): Promise<{ code: number | null; out: string; err: string }> {
  const script = `import { main } from './src/cli/main.ts'; process.exitCode = await main(${JSON.stringify(argv)});`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], {
    cwd: root,
    env: { ...process.env, SLIPWAY_API_URL: 'http://127.0.0.1:9' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  // Closing the read end before the child has even loaded its modules: its first write meets a
  // pipe without a reader, as when `head` has read its lines and exited.
  if (closeStdout) child.stdout.destroy();
  else child.stdout.on('data', (chunk) => void (out += chunk));
  child.stderr.on('data', (chunk) => void (err += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

test('a reader that stops early ends the command quietly, without an EPIPE stack trace', async () => {
  // Positive control: with a reader, the same command prints its help and succeeds.
  const read = await runCli(['help'], false);
  assert.equal(read.code, 0, read.err);
  assert.match(read.out, /^Usage: slipway/);

  const closed = await runCli(['help'], true);
  assert.equal(closed.err, '');
  assert.equal(closed.code, 0);
});
