/**
 * Turns the output of a failed sbt build into advice. The pipeline calls it with the build's
 * output lines and prints the answer after sbt's own lines; null means nothing is recognised
 * and sbt's output speaks for itself.
 */

const PACKAGER_ADVICE =
  'Add sbt-native-packager to project/plugins.sbt:\n' +
  '  addSbtPlugin("com.github.sbt" % "sbt-native-packager" % "<current version>")\n' +
  'and enable it in build.sbt (on the module that holds the main class):\n' +
  '  enablePlugins(JavaAppPackaging)\n' +
  'Optionally add `Compile / packageDoc / mappings := Seq()` to build.sbt to skip the scaladoc jar and build faster.';

function clean(line: string): string {
  return line.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').trimEnd();
}

/** `[error] foo` -> `foo`. */
function withoutLevel(line: string): string {
  return line.replace(/^\[(error|warn|info)\]\s?/, '');
}

/**
 * The command sbt could not parse: sbt echoes it on an `[error]` line followed by a line with
 * a caret under the failing position.
 */
function rejectedInput(lines: string[]): string | undefined {
  for (let i = 1; i < lines.length; i++) {
    if (/^\[error\]\s*\^$/.test(lines[i]!)) return withoutLevel(lines[i - 1]!).trim();
  }
  return undefined;
}

function packagerMissing(goal: string): string {
  const module = goal.includes('/') ? goal.slice(0, goal.lastIndexOf('/')) : '';
  return (
    `sbt has no \`${goal}\` task: ${module ? `the project "${module}"` : 'the build'} does not enable sbt-native-packager, which provides it.\n` +
    PACKAGER_ADVICE +
    (module
      ? ''
      : '\nIn a multi-module build whose root does not stage, set SBT_DEPLOY_GOAL=<module>/stage, CC_SBT_TARGET_DIR=<module> and CC_SBT_TARGET_BIN=<script name>.')
  );
}

export function explainSbtFailure(outputLines: string[]): string | null {
  const lines = outputLines.map(clean);
  const text = lines.join('\n');
  const input = rejectedInput(lines);

  // `stage` unknown at the root: "Not a valid command: stage" / "Not a valid key: stage".
  if (/Not a valid (?:command|key): stage\b/.test(text)) return packagerMissing('stage');

  // `<module>/stage` where the module exists but lacks the plugin: "No such setting/task".
  if (/No such setting\/task/.test(text) && input && /(^|\/)stage$/.test(input)) return packagerMissing(input);

  // `<name>/...` where <name> is neither a project nor a configuration.
  const unknown = /Not a valid (?:command|key|project ID): ([\w.-]+)/.exec(text)?.[1];
  if (unknown && input?.startsWith(`${unknown}/`)) {
    return (
      `sbt has no project "${unknown}" (from SBT_DEPLOY_GOAL=${input}). ` +
      'Use the id of a project defined in build.sbt (`lazy val <id> = project...`), e.g. SBT_DEPLOY_GOAL=<id>/stage, and set CC_SBT_TARGET_DIR to its folder.'
    );
  }
  if (unknown || /No such setting\/task/.test(text)) {
    return (
      `sbt does not know \`${input ?? unknown}\`. Check SBT_DEPLOY_GOAL: it lists sbt tasks or commands separated by spaces ` +
      '(default "stage"; "<module>/stage" for a multi-module build).'
    );
  }

  const launcherVersion = /\[launcher\] could not retrieve sbt ([\w.-]+)/.exec(text);
  if (launcherVersion) {
    return (
      `sbt ${launcherVersion[1]} could not be downloaded from the machine's Maven repository. ` +
      'Set sbt.version in project/build.properties to a released sbt version that the repository holds (sbt.version=1.x.y).'
    );
  }

  if (
    /UnsupportedClassVersionError|class file has wrong version|has been compiled by a more recent version of the Java Runtime/.test(text)
  ) {
    return (
      'A class needs a newer Java than the one running sbt. Set CC_JAVA_VERSION to a newer installed JDK ' +
      '(the build log of a failing CC_JAVA_VERSION lists the installed ones), or build for an older Java target.'
    );
  }

  const failedAt = lines.findIndex((l) => /Compilation failed/.test(l));
  if (failedAt >= 0) {
    // sbt's own messages: from the first `file:line:col:` error up to the summary line.
    const first = lines.findIndex((l) => /^\[error\] .*\.(scala|java):\d+(:\d+)?:/.test(l));
    const messages = (first >= 0 && first < failedAt ? lines.slice(first, failedAt) : [])
      .filter((l) => l.startsWith('[error]'))
      .slice(0, 20)
      .map(withoutLevel);
    return (
      'The code does not compile; fix these errors and push again:\n' +
      (messages.length > 0 ? messages.map((e) => `  ${e}`).join('\n') : '  (see the [error] lines above)')
    );
  }

  if (/Error downloading|unresolved dependency|ResolveException/.test(text)) {
    const missing = [...new Set([...text.matchAll(/Error downloading ([^\s]+)/g)].map((m) => m[1]!))].slice(0, 5);
    return (
      `Dependencies could not be resolved${missing.length ? `: ${missing.join(', ')}` : ''}. ` +
      "Builds resolve only from the machine's Maven repository (resolvers in build.sbt are replaced by it): " +
      'use versions published there, and check the group, name and version for typos.'
    );
  }

  if (/Type error in expression|error: not found: (value|object|type)/.test(text) && /\.sbt:\d+/.test(text)) {
    return 'build.sbt (or a .sbt file in project/) has an error; sbt names the file and line above. A missing plugin import is the usual cause.';
  }

  return null;
}
