import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';

/**
 * Reads only the parts of a file that hold data (SEEK_DATA/SEEK_HOLE, which Node does not
 * offer) and exits 0 when one of the strings is there: an app's filesystem image is a sparse
 * file of its whole budget, and reading its holes as zeros took grep 11 s for 2 GiB.
 */
const SPARSE_SEARCH = `
import os, sys
needles = [n.encode() for n in sys.argv[2:]]
keep = max(len(n) for n in needles) - 1
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
offset = 0
while offset < size:
    try:
        start = os.lseek(fd, offset, os.SEEK_DATA)
    except OSError:
        break
    end = os.lseek(fd, start, os.SEEK_HOLE)
    os.lseek(fd, start, os.SEEK_SET)
    tail = b''
    position = start
    while position < end:
        chunk = os.read(fd, min(1 << 22, end - position))
        if not chunk:
            break
        window = tail + chunk
        if any(n in window for n in needles):
            sys.exit(0)
        tail = window[-keep:] if keep else b''
        position += len(chunk)
    offset = end
sys.exit(1)
`;

/**
 * The files under `paths` that hold any of `values`: folders searched whole by one pass of grep
 * (binary files too), a path naming a file (a sparse image) through its data only. Reading the
 * data folder and an app's filesystem image once per secret made these checks the costliest
 * part of their tests.
 */
export function filesHoldingAny(paths: string | string[], values: readonly string[]): string[] {
  assert.ok(values.length > 0, 'no value to look for');
  const all = [paths].flat();
  const files = all.filter((path) => statSync(path).isFile());
  const folders = all.filter((path) => !files.includes(path));
  const found: string[] = [];
  if (folders.length > 0) {
    const patterns = values.flatMap((value) => ['-e', value]);
    const grep = spawnSync('grep', ['-rlaF', ...patterns, '--', ...folders], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    assert.ok(grep.status === 0 || grep.status === 1, `grep failed: ${grep.stderr}`);
    found.push(...grep.stdout.split('\n').filter(Boolean));
  }
  for (const file of files) {
    const search = spawnSync('python3', ['-c', SPARSE_SEARCH, file, ...values], { encoding: 'utf8' });
    assert.ok(search.status === 0 || search.status === 1, `the search of ${file} failed: ${search.stderr}`);
    if (search.status === 0) found.push(file);
  }
  return found;
}
