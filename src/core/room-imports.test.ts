/**
 * Holds the code to ARCHITECTURE.md's table of rooms: each folder of src/ may import only the
 * rooms its "may import" column names (every room for "everything", none for "nothing of
 * slipway"). A new arrow is a design decision, so it is written there first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('..', import.meta.url));
const ARCHITECTURE = join(SRC, '..', 'ARCHITECTURE.md');

/** room -> rooms it may import, from the table's rows: | `room/` | owns | may import | */
function allowedImports(): Map<string, Set<string> | 'all'> {
  const allowed = new Map<string, Set<string> | 'all'>();
  for (const line of readFileSync(ARCHITECTURE, 'utf8').split('\n')) {
    const row = /^\| `([a-z-]+)\/` \|.*\| ([^|]*) \|$/.exec(line);
    if (!row) continue;
    const column = row[2]!;
    allowed.set(row[1]!, column.trim() === 'everything' ? 'all' : new Set([...column.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]!)));
  }
  return allowed;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return entry.endsWith('.ts') && !entry.endsWith('.test.ts') ? [path] : [];
  });
}

test('the table lists every room of src/', () => {
  const rooms = readdirSync(SRC).filter((entry) => statSync(join(SRC, entry)).isDirectory());
  const listed = allowedImports();
  assert.deepEqual(
    rooms.filter((room) => !listed.has(room)),
    [],
    'add a row for each of these rooms to the table in ARCHITECTURE.md',
  );
});

test('every import between rooms is one the table allows', () => {
  const allowed = allowedImports();
  const refused: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const room = relative(SRC, file).split(sep)[0]!;
    const may = allowed.get(room);
    if (may === 'all') continue;
    // Static imports and inline `import('...')` types (and dynamic imports) alike.
    for (const match of readFileSync(file, 'utf8').matchAll(/(?:from |import\()'(\.[^']+)'/g)) {
      const target = relative(SRC, normalize(join(dirname(file), match[1]!))).split(sep);
      if (target.length < 2 || target[0] === '..' || target[0] === room) continue;
      if (!may?.has(target[0]!)) refused.push(`${relative(SRC, file)} imports ${target[0]}/`);
    }
  }
  assert.deepEqual(refused, [], 'allow the arrow in ARCHITECTURE.md (with its reason) or move the code');
});
