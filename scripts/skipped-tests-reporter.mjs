// A test reporter for scripts/run-tests.mjs: one line per skipped test or suite, "<file>\t<name>\t<reason>".
// The run prints them at the end, and under CI fails when there is any: a CI run that passes
// with a part of the suite skipped proves nothing, whatever made it skip.
export default async function* skippedTests(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { skip, name, file } = event.data;
    if (skip === undefined || skip === false) continue;
    const reason = skip === true ? '(no reason given)' : String(skip);
    yield `${[file ?? '', name, reason].map((field) => String(field).replace(/[\t\n]/g, ' ')).join('\t')}\n`;
  }
}
