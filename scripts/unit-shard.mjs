// One process of the unit suite (scripts/run-tests.mjs --unit): it imports a share of the unit
// files, so their tests run one file after the other in this process. A process per file pays
// Node's start, the TypeScript loader and the shared modules' load for each of about two hundred
// files: three quarters of the suite's processor time, most of its wall time on two cores.
//
// The files load one at a time, in the order given, before any test runs: a test counted as
// running holds the run open until the last file (and whatever it awaits at its top level, such
// as a check for a part of the machine) has loaded. Without it, a run forced to exit once its
// known tests are done (--test-force-exit) could end before a late file's tests were known.
// A file that fails to load fails that test, named; the other files load and run all the same.
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

/**
 * Loads the given files (absolute paths) into this process. `name` says which share it is in
 * the test's name, what the run prints for it.
 */
export async function loadUnitShard(name, files) {
  let loaded;
  const loading = new Promise((resolve) => {
    loaded = resolve;
  });
  test(`${name}: its ${files.length} files load`, async () => {
    const failures = await loading;
    if (failures.length > 0) {
      throw new Error(`${failures.length} file(s) failed to load, so their tests did not run:\n${failures.join('\n')}`);
    }
  });
  const failures = [];
  for (const file of files) {
    try {
      await import(pathToFileURL(file).href);
    } catch (err) {
      failures.push(`  - ${file}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }
  }
  loaded(failures);
}
