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

export function explainSbtFailure(outputLines: string[]): string | null {
  const lines = outputLines.map(clean);
  const text = lines.join('\n');

  // `stage` (alone or as <module>/stage, Universal/stage...) unknown: the packager is missing.
  const missingStage = /Not a valid (?:command|key): ((?:[\w.-]+\s*\/\s*)*stage)\b/.exec(text);
  if (missingStage) {
    const goal = missingStage[1]!.replace(/\s+/g, '');
    const module = goal.includes('/') ? goal.slice(0, goal.lastIndexOf('/')) : '';
    return (
      `sbt has no \`${goal}\` task: ${module ? `the project "${module}"` : 'the build'} does not enable sbt-native-packager, which provides it.\n` +
      PACKAGER_ADVICE +
      (module
        ? ''
        : '\nIn a multi-module build whose root does not stage, set SBT_DEPLOY_GOAL=<module>/stage, CC_SBT_TARGET_DIR=<module> and CC_SBT_TARGET_BIN=<script name>.')
    );
  }

  const badProject = /Not a valid project ID: ([\w.-]+)/.exec(text);
  if (badProject) {
    return (
      `sbt has no project "${badProject[1]}" (named in SBT_DEPLOY_GOAL). ` +
      'Use the id of a project defined in build.sbt (`lazy val <id> = project...`), e.g. SBT_DEPLOY_GOAL=<id>/stage.'
    );
  }

  const badCommand = /Not a valid (?:command|key): (\S+)/.exec(text);
  if (badCommand) {
    return (
      `sbt does not know \`${badCommand[1]}\`. Check SBT_DEPLOY_GOAL: it lists sbt tasks or commands separated by spaces ` +
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

  if (/UnsupportedClassVersionError|class file has wrong version|has been compiled by a more recent version of the Java Runtime/.test(text)) {
    return (
      'A class needs a newer Java than the one running sbt. Set CC_JAVA_VERSION to a newer installed JDK ' +
      '(the build log of a failing CC_JAVA_VERSION lists the installed ones), or build for an older Java target.'
    );
  }

  const compileFailed = lines.some((l) => /Compilation failed/.test(l));
  if (compileFailed) {
    const errors = lines
      .filter((l) => l.startsWith('[error]') && /\.(scala|java|sbt):\d+(:\d+)?:/.test(l))
      .slice(0, 10)
      .map(withoutLevel);
    return (
      'The code does not compile; fix these errors and push again:\n' +
      (errors.length > 0 ? errors.map((e) => `  ${e}`).join('\n') : '  (see the [error] lines above)')
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
