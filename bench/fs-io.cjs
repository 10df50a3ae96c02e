// The file I/O bench's measuring program (bench/fs-buckets.ts), one phase a run, so the harness
// can drop the page cache between a write and its read. The same file runs on the host (as the
// app's user, in a folder of the data disk) and inside a deployed app's sandbox (in its bucket),
// copied into the app's repository. CommonJS and Node's own modules only: it runs as is in both.
//
//   node fs-io.cjs <write-large|read-large|write-small|read-small|clean> <folder> [MiB | files]
// prints one line of JSON: { phase, bytes, files, seconds }.
const fs = require('node:fs');
const path = require('node:path');

const CHUNK = 1024 * 1024;
const SMALL = 4096;
const [phase, folder, countText] = process.argv.slice(2);
const count = Number(countText ?? '0');
const large = path.join(folder, 'large.bin');
const small = path.join(folder, 'small');

function fsyncFolder(dir) {
  const fd = fs.openSync(dir, 'r');
  fs.fsyncSync(fd);
  fs.closeSync(fd);
}

// Sequential write in 1 MiB chunks, fsync once at the end (the time includes it).
function writeLarge() {
  const chunk = Buffer.alloc(CHUNK, 0x5a);
  const fd = fs.openSync(large, 'w');
  for (let i = 0; i < count; i++) fs.writeSync(fd, chunk);
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  fsyncFolder(folder);
  return { bytes: count * CHUNK, files: 1 };
}

function readLarge() {
  const chunk = Buffer.alloc(CHUNK);
  const fd = fs.openSync(large, 'r');
  let bytes = 0;
  for (let n; (n = fs.readSync(fd, chunk, 0, CHUNK, null)) > 0; ) bytes += n;
  fs.closeSync(fd);
  return { bytes, files: 1 };
}

// Many small files, each written and fsynced (what an app storing uploads durably does), then the folder.
function writeSmall() {
  fs.mkdirSync(small, { recursive: true });
  const data = Buffer.alloc(SMALL, 0x33);
  for (let i = 0; i < count; i++) {
    const fd = fs.openSync(path.join(small, `f-${i}`), 'w');
    fs.writeSync(fd, data);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
  }
  fsyncFolder(small);
  return { bytes: count * SMALL, files: count };
}

function readSmall() {
  let bytes = 0;
  const names = fs.readdirSync(small);
  for (const name of names) bytes += fs.readFileSync(path.join(small, name)).length;
  return { bytes, files: names.length };
}

function clean() {
  fs.rmSync(large, { force: true });
  fs.rmSync(small, { recursive: true, force: true });
  return { bytes: 0, files: 0 };
}

const phases = { 'write-large': writeLarge, 'read-large': readLarge, 'write-small': writeSmall, 'read-small': readSmall, clean };
const run = phases[phase];
if (!run || !folder) {
  console.error(`usage: node fs-io.cjs <${Object.keys(phases).join('|')}> <folder> [MiB | files]`);
  process.exit(2);
}
const began = process.hrtime.bigint();
const done = run();
const seconds = Number(process.hrtime.bigint() - began) / 1e9;
console.log(JSON.stringify({ phase, ...done, seconds }));
