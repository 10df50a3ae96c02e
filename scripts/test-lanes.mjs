// How the whole suite's files are dealt out to lanes that run at the same time (scripts/run-tests.mjs).
// Each lane runs its files one after the other; a lane's length is the sum of its files' times,
// read from test/file-times.tsv (seconds<TAB>file, the figures of a measured run, which each run
// writes again to test-artifacts/file-times.tsv), or a guess for a file not in it yet.
import { existsSync, readFileSync } from 'node:fs';

const GUESS_SECONDS = { integration: 30, unit: 1 };

/** The measured seconds of each file, by its path from the root. */
export function readFileTimes(path) {
  const times = new Map();
  if (!existsSync(path)) return times;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const [seconds, file] = line.split('\t');
    if (file && Number.isFinite(Number(seconds))) times.set(file.trim(), Number(seconds));
  }
  return times;
}

/** A file's measured time, or the guess for its kind. */
export function secondsOf(file, times) {
  return times.get(file) ?? (file.startsWith('test/') ? GUESS_SECONDS.integration : GUESS_SECONDS.unit);
}

/**
 * Deals `files` out to `count` lanes so that they end near the same time: the longest first,
 * each to the lane that is shortest so far. Files of one group (`groupOf` gives the same name)
 * go to one lane together: they share a part of the machine one file at a time. Each lane keeps
 * its files in their given order.
 */
export function dealFiles(files, count, times, groupOf = () => undefined) {
  const units = new Map();
  for (const file of files) {
    const key = groupOf(file) ?? file;
    const unit = units.get(key) ?? { files: [], seconds: 0 };
    unit.files.push(file);
    unit.seconds += secondsOf(file, times);
    units.set(key, unit);
  }
  const lanes = Array.from({ length: count }, () => ({ files: new Set(), seconds: 0 }));
  for (const unit of [...units.values()].sort((a, b) => b.seconds - a.seconds)) {
    const shortest = lanes.reduce((best, lane) => (lane.seconds < best.seconds ? lane : best));
    for (const file of unit.files) shortest.files.add(file);
    shortest.seconds += unit.seconds;
  }
  return lanes.map((lane) => ({ files: files.filter((file) => lane.files.has(file)), seconds: lane.seconds }));
}
