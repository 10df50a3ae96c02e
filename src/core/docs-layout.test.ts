/**
 * Holds the documents to the code: the data folder's paths they name for deployments exist in
 * storage/deploy-layout.ts's tree, and README's list of rooms names every folder of src/.
 * (ARCHITECTURE.md's table of rooms is held by room-imports.test.ts.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('..', import.meta.url));
const REPO = join(SRC, '..');
const rooms = () => readdirSync(SRC).filter((entry) => statSync(join(SRC, entry)).isDirectory());

/** A path with each `<placeholder>` made one wildcard, trailing `…`, `/` and dots dropped. */
function normalised(path: string): string {
  return path
    .replace(/^<data(-dir)?>\//, '')
    .replace(/<[^>]+>/g, '*')
    .replace(/[/.…]+$/u, '');
}

/** One segment of a path as the documents write it: a name, a `<placeholder>` (spaces allowed) or `…`. */
const SEGMENT = '(?:<[^>\\n]+>|[A-Za-z0-9._-]+|…)';

/** The folders deploy-layout.ts draws and names (tree and notes alike). */
function layoutPaths(): string[] {
  const text = readFileSync(join(SRC, 'storage', 'deploy-layout.ts'), 'utf8');
  return [...text.matchAll(new RegExp(`<data>(?:/${SEGMENT})+`, 'g'))].map((m) => normalised(m[0]));
}

/** The documents that speak of the layout: the architecture, the README, docs/ and each room's README. */
function documents(): string[] {
  const docs = readdirSync(join(REPO, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(REPO, 'docs', name));
  const roomReadmes = rooms()
    .map((room) => join(SRC, room, 'README.md'))
    .filter((path) => {
      try {
        return statSync(path).isFile();
      } catch {
        return false;
      }
    });
  return [join(REPO, 'ARCHITECTURE.md'), join(REPO, 'README.md'), ...docs, ...roomReadmes];
}

// The top folders of the data folder that deploy-layout.ts owns.
const LAYOUT_ROOTS = new RegExp(`(?:<data>/|│\\s+)((?:apps|builds|releases|cache|disks|build-secrets|repos)(?:/${SEGMENT})+)`, 'g');

test("the documents name only the data folder's paths deploy-layout.ts has", () => {
  const known = layoutPaths();
  assert.ok(known.length >= 8, `deploy-layout.ts's tree was read (${known.length} paths)`);
  const wrong: string[] = [];
  for (const file of documents()) {
    for (const match of readFileSync(file, 'utf8').matchAll(LAYOUT_ROOTS)) {
      const path = normalised(match[1]!);
      // A document may name a folder or a file inside one the layout draws.
      if (!known.some((k) => path === k || path.startsWith(`${k}/`) || k.startsWith(`${path}/`))) {
        wrong.push(`${relative(REPO, file)}: ${match[1]}`);
      }
    }
  }
  assert.deepEqual(wrong, [], 'correct these paths (or draw the folder in deploy-layout.ts)');
});

test("README's list of rooms names every folder of src/", () => {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const layout = readme.slice(readme.indexOf('## Layout'));
  const section = layout.slice(0, layout.indexOf('\n## ', 3) === -1 ? undefined : layout.indexOf('\n## ', 3));
  const missing = rooms().filter((room) => !section.includes(`\`${room}\``));
  assert.deepEqual(missing, [], "add these rooms to README's Layout section");
});
