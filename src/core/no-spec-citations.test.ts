/**
 * Users never see the document the platform was first written against, so no message, note,
 * warning or generated file may send them to "SPEC §…": each says the rule itself. Comments cite
 * the rules as the repository words them, in docs/behaviour.md, so a reader can follow them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('..', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|html)$/.test(entry) && !entry.endsWith('.test.ts') ? [path] : [];
  });
}

/** A regular expression may follow these (otherwise `/` divides). */
const BEFORE_REGEX = /[(,=:[!&|?{};+\-*%<>~^]$|\b(return|typeof|case|of|in|void|delete|throw)$/;

/** The text of every string and template literal, with the line it starts on; comments skipped. */
function stringLiterals(code: string): Array<{ line: number; text: string }> {
  const found: Array<{ line: number; text: string }> = [];
  const lineAt = (i: number) => code.slice(0, i).split('\n').length;
  const templateDepth: number[] = [];
  let braces = 0;
  let i = 0;
  let previous = '';
  const readString = (quote: string): void => {
    const start = i;
    let text = '';
    i++;
    while (i < code.length && code[i] !== quote) {
      if (code[i] === '\\') {
        text += code[i + 1];
        i += 2;
        continue;
      }
      if (quote === '`' && code[i] === '$' && code[i + 1] === '{') {
        templateDepth.push(braces);
        i += 2;
        found.push({ line: lineAt(start), text });
        return;
      }
      text += code[i++];
    }
    i++;
    found.push({ line: lineAt(start), text });
  };
  while (i < code.length) {
    const c = code[i]!;
    if (c === '/' && code[i + 1] === '/') {
      i = code.indexOf('\n', i) === -1 ? code.length : code.indexOf('\n', i);
    } else if (c === '/' && code[i + 1] === '*') {
      i = code.indexOf('*/', i + 2) === -1 ? code.length : code.indexOf('*/', i + 2) + 2;
    } else if (c === '"' || c === "'" || c === '`') {
      readString(c);
      previous = 'x';
    } else if (c === '}' && templateDepth.length > 0 && templateDepth[templateDepth.length - 1] === braces) {
      templateDepth.pop();
      readString('`');
      previous = 'x';
    } else if (c === '/' && BEFORE_REGEX.test(previous || '(')) {
      let inClass = false;
      i++;
      while (i < code.length && (inClass || code[i] !== '/')) {
        if (code[i] === '\\') i++;
        else if (code[i] === '[') inClass = true;
        else if (code[i] === ']') inClass = false;
        i++;
      }
      i++;
      previous = 'x';
    } else {
      if (c === '{') braces++;
      if (c === '}') braces--;
      if (!/\s/.test(c)) previous = (previous + c).slice(-8);
      i++;
    }
  }
  return found;
}

test('the literal scanner finds strings and templates, and skips comments and regular expressions', () => {
  const code = [
    '// SPEC in a comment',
    "/* SPEC §1 */ const a = 'one SPEC §2';",
    'const r = /["`\'/]/g; const d = 4 / 2 / 1;',
    'const t = `x ${f({ y: "SPEC §3" })} SPEC §4 ${1} z`;',
    '/** SPEC */',
  ].join('\n');
  assert.deepEqual(
    stringLiterals(code).filter((l) => l.text.includes('SPEC')),
    [
      { line: 2, text: 'one SPEC §2' },
      { line: 4, text: 'SPEC §3' },
      { line: 4, text: ' SPEC §4 ' },
    ],
  );
});

test('no message, note or generated file cites the SPEC document: each says the rule itself', () => {
  const citations = sourceFiles(SRC).flatMap((file) => {
    const code = readFileSync(file, 'utf8');
    const literals = file.endsWith('.html') ? [{ line: 0, text: code.replace(/<!--[\s\S]*?-->/g, '') }] : stringLiterals(code);
    return literals.filter((l) => /\bSPEC\b/.test(l.text)).map((l) => `${relative(SRC, file)}:${l.line}: ${l.text.trim().slice(0, 100)}`);
  });
  assert.deepEqual(citations, []);
});

test('comments cite docs/behaviour.md, which is in the repository, not a SPEC that is not', () => {
  const citations = sourceFiles(SRC).flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, i) => (/\bSPEC\b/.test(line) ? [`${relative(SRC, file)}:${i + 1}: ${line.trim().slice(0, 100)}`] : [])),
  );
  assert.deepEqual(citations, []);
});
