import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { explainSbtFailure } from './explain-failure.js';

// Output captured from real sbt 1.13.0 runs on this machine (paths shortened).
const noStage = `[info] welcome to sbt 1.13.0 (Debian Java 17.0.15)
[info] loading project definition from /b/project
[info] set current project to no-packager (in build file:/b/)
[error] Not a valid command: stage (similar: last-grep, set, last)
[error] Not a valid project ID: stage
[error] Expected ':'
[error] Not a valid key: stage (similar: state, target, tags)
[error] stage
[error]      ^`;

const moduleWithoutStage = `[info] set current project to scala-multi (in build file:/b/)
[error] No such setting/task
[error] core/stage
[error]           ^`;

const unknownProject = `[info] set current project to scala-multi (in build file:/b/)
[error] Expected ID character
[error] Not a valid command: nope (similar: new, inspect, loadp)
[error] Expected project ID
[error] Expected configuration
[error] Expected ':'
[error] Expected key
[error] Not a valid key: nope (similar: name, compile, onComplete)
[error] nope/stage
[error]     ^`;

const unknownTask = `[error] Not a valid command: stag (similar: stage, last)
[error] Not a valid project ID: stag
[error] Expected ':'
[error] Not a valid key: stag (similar: stage, state)
[error] stag
[error]     ^`;

const compileError = `[info] compiling 2 Scala sources to /b/target/scala-2.13/classes ...
[error] /b/src/main/scala/example/Broken.scala:1:30: type mismatch;
[error]  found   : String("nope")
[error]  required: Int
[error] object Broken { val x: Int = "nope"; def f = undefinedThing }
[error]                              ^
[error] /b/src/main/scala/example/Broken.scala:1:46: not found: value undefinedThing
[error] object Broken { val x: Int = "nope"; def f = undefinedThing }
[error]                                              ^
[error] two errors found
[error] (Compile / compileIncremental) Compilation failed
[error] Total time: 17 s, completed Nov 21, 2026, 11:34:17 PM`;

const unresolved = `[error] (update) sbt.librarymanagement.ResolveException: Error downloading com.github.sbt:sbt2-compat;sbtVersion=1.0;scalaVersion=2.12:0.1.0
[error]   Not found
[error]   not found: /cache/ivy/local/com.github.sbt/sbt2-compat/scala_2.12/sbt_1.0/0.1.0/ivys/ivy.xml
[warn] Project loading failed: (r)etry, (q)uit, (l)ast, or (i)gnore? (default: r)`;

const launcherMissingSbt = `[info] [launcher] getting org.scala-sbt sbt 1.13.1  (this may take some time)...
[error] [launcher] xsbt.boot.internal.shaded.coursier.error.ResolutionError$CantDownloadModule: Error downloading org.scala-sbt:sbt:1.13.1
[error] [launcher] could not retrieve sbt 1.13.1`;

const lines = (text: string) => text.split('\n');

describe('explainSbtFailure', () => {
  it('no stage task: add sbt-native-packager and enable JavaAppPackaging', () => {
    const advice = explainSbtFailure(lines(noStage))!;
    assert.match(advice, /sbt has no `stage` task/);
    assert.match(advice, /project\/plugins\.sbt/);
    assert.match(advice, /addSbtPlugin\("com\.github\.sbt" % "sbt-native-packager"/);
    assert.match(advice, /enablePlugins\(JavaAppPackaging\)/);
    assert.match(advice, /SBT_DEPLOY_GOAL=<module>\/stage/);
  });

  it('a module without the plugin: names the module', () => {
    const advice = explainSbtFailure(lines(moduleWithoutStage))!;
    assert.match(advice, /sbt has no `core\/stage` task: the project "core" does not enable sbt-native-packager/);
    assert.match(advice, /enablePlugins\(JavaAppPackaging\)/);
  });

  it('an unknown project in SBT_DEPLOY_GOAL', () => {
    assert.match(explainSbtFailure(lines(unknownProject))!, /sbt has no project "nope" \(from SBT_DEPLOY_GOAL=nope\/stage\)/);
  });

  it('an unknown task in SBT_DEPLOY_GOAL', () => {
    assert.match(explainSbtFailure(lines(unknownTask))!, /sbt does not know `stag`\. Check SBT_DEPLOY_GOAL/);
  });

  it("a compile error repeats sbt's own messages", () => {
    const advice = explainSbtFailure(lines(compileError))!;
    assert.match(advice, /does not compile/);
    assert.match(advice, /Broken\.scala:1:30: type mismatch;/);
    assert.match(advice, /required: Int/);
    assert.match(advice, /not found: value undefinedThing/);
    assert.doesNotMatch(advice, /Total time/);
  });

  it('unresolved dependencies: only the machine repository is used', () => {
    const advice = explainSbtFailure(lines(unresolved))!;
    assert.match(advice, /could not be resolved: com\.github\.sbt:sbt2-compat/);
    assert.match(advice, /machine's Maven repository/);
  });

  it('an sbt version the repository lacks', () => {
    assert.match(explainSbtFailure(lines(launcherMissingSbt))!, /sbt 1\.13\.1 could not be downloaded.*project\/build\.properties/s);
  });

  it('a newer class file than the JVM', () => {
    const text =
      '[error] java.lang.UnsupportedClassVersionError: example/Main has been compiled by a more recent version of the Java Runtime (class file version 69.0)';
    assert.match(explainSbtFailure([text])!, /CC_JAVA_VERSION/);
  });

  it('ignores colour codes', () => {
    const coloured = lines(noStage).map((l) => l.replace('[error]', '[\x1b[31merror\x1b[0m]'));
    assert.match(explainSbtFailure(coloured.map((l) => l.replace(/\x1b\[[0-9;]*m/g, '')))!, /no `stage` task/);
    assert.match(explainSbtFailure(['\x1b[31m[error] Not a valid command: stage\x1b[0m'])!, /no `stage` task/);
  });

  it('null when nothing is recognised', () => {
    assert.equal(explainSbtFailure(['[info] welcome to sbt', '[error] something else went wrong']), null);
    assert.equal(explainSbtFailure([]), null);
  });
});
