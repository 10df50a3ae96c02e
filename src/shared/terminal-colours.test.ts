import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stripVTControlCharacters } from 'node:util';
import { colouredRuns, withoutTerminalCodes } from './terminal-colours.js';

const ESC = '\x1b';

test("a Play log line's colours become runs with the console's classes, and reset ends them", () => {
  const line = `${ESC}[34mINFO ${ESC}[0;39m ${ESC}[36mp.c.s.AkkaHttpServer${ESC}[0;39m - Listening for HTTP on /0.0.0.0:8080`;
  assert.deepEqual(colouredRuns(line), [
    { text: 'INFO ', classes: ['ansi-blue'] },
    { text: ' ', classes: [] },
    { text: 'p.c.s.AkkaHttpServer', classes: ['ansi-cyan'] },
    { text: ' - Listening for HTTP on /0.0.0.0:8080', classes: [] },
  ]);
  assert.deepEqual(colouredRuns(`${ESC}[1;91merror${ESC}[22m still red${ESC}[m plain`), [
    { text: 'error', classes: ['ansi-bright-red', 'ansi-bold'] },
    { text: ' still red', classes: ['ansi-bright-red'] },
    { text: ' plain', classes: [] },
  ]);
});

test('other escape sequences are dropped, never shown; a plain line is one run', () => {
  assert.deepEqual(colouredRuns('plain [34m not an escape'), [{ text: 'plain [34m not an escape', classes: [] }]);
  assert.deepEqual(colouredRuns(`${ESC}[2K${ESC}[1Gprogress ${ESC}]0;title${ESC}\\done${ESC}[38;5;208m!`), [
    { text: 'progress ', classes: [] },
    { text: 'done', classes: [] },
    { text: '!', classes: [] },
  ]);
});

test("stripping agrees with Node's own on the sequences programs write", () => {
  for (const line of [
    `${ESC}[34mINFO ${ESC}[0;39m started`,
    `${ESC}[1;31mbold red${ESC}[0m`,
    `${ESC}[38;2;255;0;0mtrue colour${ESC}[39m`,
    `${ESC}[2K${ESC}[1Gspinner`,
  ]) {
    assert.equal(withoutTerminalCodes(line), stripVTControlCharacters(line), JSON.stringify(line));
  }
});
