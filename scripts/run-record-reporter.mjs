// A test reporter for scripts/run-tests.mjs, a line per fact the run reports at its end:
//   skipped\t<file>\t<name>\t<reason>  each skipped test or suite: under CI any fails the run,
//                                      since a CI run that passes with a part of the suite
//                                      skipped proves nothing, whatever made it skip;
//   failed\t<file>\t<name>\t<error>  each failed test, with the first lines of its error: printed
//                                      again last, where a CI log cut to its end still shows why;
//   ended\t<file>\t<epoch ms>          each end of a top-level test of a file: with files run
//                                      one at a time, the span from one file's last end to the
//                                      next's is that file's whole time, set-up included.
// The lines go to the file SLIPWAY_TEST_RECORD names, written as they come: a run forced to exit
// once its tests are done (--test-force-exit) loses what a reporter's destination stream still
// buffered, and a skip lost there would let a CI run pass with part of the suite skipped.
import { appendFileSync } from 'node:fs';
import { Transform } from 'node:stream';

const record = process.env.SLIPWAY_TEST_RECORD;
if (!record) throw new Error('run-record-reporter: SLIPWAY_TEST_RECORD names no file to write the record to.');

export default new Transform({
  writableObjectMode: true,
  transform(event, _encoding, done) {
    if (event.type === 'test:pass' || event.type === 'test:fail') recordEvent(event.data);
    if (event.type === 'test:fail') recordFailure(event.data);
    done();
  },
});

function recordEvent({ skip, name, file, nesting }) {
  if (nesting === 0 && file) appendFileSync(record, line(['ended', file, Date.now()]));
  if (skip === undefined || skip === false) return;
  appendFileSync(record, line(['skipped', file ?? '', name, skip === true ? '(no reason given)' : String(skip)]));
}

function recordFailure({ name, file, details }) {
  const error = details?.error;
  // A suite whose tests failed says only that; its failed tests are recorded themselves.
  if (error?.failureType === 'subtestsFailed') return;
  const cause = error?.cause ?? error;
  const text = cause instanceof Error ? (cause.stack ?? cause.message) : String(cause);
  const firstLines = text
    .split('\n')
    .filter((at) => at.trim() !== '' && !/\(node:/.test(at))
    .slice(0, 8)
    .join(' | ')
    .slice(0, 1200);
  appendFileSync(record, line(['failed', file ?? '', name, firstLines]));
}

function line(fields) {
  return `${fields.map((field) => String(field).replace(/[\t\n]/g, ' ')).join('\t')}\n`;
}
