// A test reporter for scripts/run-tests.mjs, a line per fact the run reports at its end:
//   skipped\t<file>\t<name>\t<reason>  each skipped test or suite: under CI any fails the run,
//                                      since a CI run that passes with a part of the suite
//                                      skipped proves nothing, whatever made it skip;
//   ended\t<file>\t<epoch ms>          each end of a top-level test of a file: with files run
//                                      one at a time, the span from one file's last end to the
//                                      next's is that file's whole time, set-up included.
export default async function* runRecord(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { skip, name, file, nesting } = event.data;
    if (nesting === 0 && file) yield line(['ended', file, Date.now()]);
    if (skip === undefined || skip === false) continue;
    yield line(['skipped', file ?? '', name, skip === true ? '(no reason given)' : String(skip)]);
  }
}

function line(fields) {
  return `${fields.map((field) => String(field).replace(/[\t\n]/g, ' ')).join('\t')}\n`;
}
