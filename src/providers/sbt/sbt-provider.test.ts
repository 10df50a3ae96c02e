import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile, cp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { listInstalledJdks, type InstalledJdk } from '../../toolchains/sbt/jdks.js';
import { PlanError, type PlanContext } from '../plan.js';
import { DEFAULT_SBT_VERSION } from './build-properties.js';
import { SBT_JVM_OPTIONS } from './build-command.js';
import { PLACEHOLDER } from './placeholders.js';
import { sbtProvider } from './sbt-provider.js';

const here = dirname(fileURLToPath(import.meta.url));
const examples = resolve(here, '../../../examples');
const single = join(examples, 'scala-single');
const multi = join(examples, 'scala-multi');

function context(sourceDir: string, env: Record<string, string> = {}): PlanContext {
  return { sourceDir, appType: 'sbt', env, catalog: { versions: async () => [] } };
}

let jdks: InstalledJdk[];
let defaultJdk: InstalledJdk;
let scratch: string;

before(async () => {
  jdks = await listInstalledJdks();
  defaultJdk = jdks.find((j) => j.isDefault) ?? jdks.at(-1)!;
  scratch = await mkdtemp(join(tmpdir(), 'slipway-sbt-plan-'));
});
after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

async function project(name: string, files: Record<string, string>): Promise<string> {
  const dir = join(scratch, name);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  await mkdir(dir, { recursive: true });
  return dir;
}

async function planError(promise: Promise<unknown>): Promise<PlanError> {
  const error = await promise.then(
    () => assert.fail('expected a PlanError'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof PlanError, `expected a PlanError, got ${String(error)}`);
  return error;
}

function expectedArgv(goals: string[], jdk: InstalledJdk): string[] {
  return [
    `${jdk.javaHome}/bin/java`,
    // The default build flavour, S: 2 GiB.
    '-XX:MaxRAM=2147483648',
    '-XX:InitialRAMPercentage=25',
    '-XX:MaxRAMPercentage=70',
    ...SBT_JVM_OPTIONS,
    '-Dsbt.log.noformat=true',
    '-Dsbt.color=false',
    '-Dsbt.supershell=false',
    '-Dsbt.server.forcestart=true',
    '-Dsbt.repository.config=${SLIPWAY_SBT_REPOSITORIES}',
    '-Dsbt.override.build.repos=true',
    '-Dsbt.boot.directory=${SLIPWAY_APP_CACHE}/sbt/boot',
    '-Dsbt.ivy.home=${SLIPWAY_APP_CACHE}/sbt/ivy',
    '-Dsbt.coursier.home=${SLIPWAY_APP_CACHE}/sbt/coursier',
    '-Dsbt.global.base=${SLIPWAY_APP_CACHE}/sbt/global',
    '-Duser.home=${SLIPWAY_APP_CACHE}/sbt/home',
    '-Djava.io.tmpdir=${SLIPWAY_APP_CACHE}/sbt/tmp',
    '-jar',
    '${SLIPWAY_SBT_LAUNCHER}',
    ...goals,
  ];
}

describe('sbt provider: detect', () => {
  it('recognises build.sbt or project/build.properties, and nothing else', async () => {
    assert.equal(await sbtProvider.detect(single), true);
    assert.equal(await sbtProvider.detect(multi), true);
    assert.equal(await sbtProvider.detect(await project('only-properties', { 'project/build.properties': 'sbt.version=1.13.0\n' })), true);
    assert.equal(await sbtProvider.detect(await project('only-build-sbt', { 'build.sbt': 'name := "x"\n' })), true);
    assert.equal(await sbtProvider.detect(await project('node-app', { 'package.json': '{}' })), false);
  });
});

describe('sbt provider: plan', () => {
  it('default: sbt from build.properties, the default JDK, `stage`, first staged binary, http.port', async () => {
    const plan = await sbtProvider.plan(context(single));
    assert.equal(plan.provider, 'sbt');
    assert.deepEqual(plan.toolchain, [
      { name: 'sbt', version: '1.13.0', reason: 'sbt.version in project/build.properties' },
      { name: 'java', version: String(defaultJdk.major), reason: "machine's default java" },
    ]);
    assert.deepEqual(plan.build, [{ label: 'sbt stage', argv: expectedArgv(['stage'], defaultJdk) }]);
    assert.deepEqual(plan.start, { label: 'start staged binary', argv: [PLACEHOLDER.stagedBinary, '-Dhttp.port=8080'] });
    assert.deepEqual(plan.env, { JAVA_HOME: defaultJdk.javaHome, JAVA_OPTS: '-Dhttp.port=8080' });
    assert.deepEqual(plan.files, []);
    assert.deepEqual(plan.beforeStart, []);
    assert.deepEqual(plan.warnings, []);
    assert.ok(plan.notes.some((n) => n.includes('target/universal/stage/bin')));
  });

  it("sizes the build's heap to the build flavour, and leaves it to the app's JAVA_TOOL_OPTIONS when that sets one", async () => {
    const xs = await sbtProvider.plan({ ...context(single), buildMemoryBytes: 2 ** 30 });
    const argv = xs.build[0]!.argv;
    assert.deepEqual(argv.slice(1, 4), ['-XX:MaxRAM=1073741824', '-XX:InitialRAMPercentage=25', '-XX:MaxRAMPercentage=70']);
    assert.ok(!argv.some((a) => a.startsWith('-Xmx') || a.startsWith('-Xms')), 'no fixed heap beside the percentages');
    assert.ok(xs.notes.some((n) => n.includes("heap fits the build flavour's 1 GiB") && n.includes('at most 716 MiB')));

    const own = await sbtProvider.plan(context(single, { JAVA_TOOL_OPTIONS: '-Dx=1 -Xmx3g' }));
    assert.ok(!own.build[0]!.argv.some((a) => /RAM|-Xm[sx]/.test(a)), 'the app sizes the heap: the build adds nothing');
    assert.ok(own.notes.some((n) => n.includes("the app's JAVA_TOOL_OPTIONS sets")));
    const unrelated = await sbtProvider.plan(context(single, { JAVA_TOOL_OPTIONS: '-Dfile.encoding=UTF-8' }));
    assert.ok(unrelated.build[0]!.argv.includes('-XX:MaxRAMPercentage=70'));
  });

  it('SBT_DEPLOY_GOAL replaces `stage`; several words are several sbt commands', async () => {
    const plan = await sbtProvider.plan(context(multi, { SBT_DEPLOY_GOAL: ' clean  web/stage ' }));
    assert.deepEqual(plan.build[0]!.argv, expectedArgv(['clean', 'web/stage'], defaultJdk));
    assert.equal(plan.build[0]!.label, 'sbt clean web/stage');
  });

  it('a blank SBT_DEPLOY_GOAL means the default goal', async () => {
    const plan = await sbtProvider.plan(context(single, { SBT_DEPLOY_GOAL: '   ' }));
    assert.deepEqual(plan.build[0]!.argv.slice(-1), ['stage']);
  });

  for (const hostile of [
    'stage; rm -rf /',
    'stage && id',
    '$(id)',
    '`id`',
    'stage | cat',
    '"stage"',
    "'stage'",
    '-Dsbt.repository.config=/tmp/x',
    '@/etc/passwd',
    'stage\nid',
    'stage > /tmp/x',
    '${SLIPWAY_APP_CACHE}',
  ]) {
    it(`refuses SBT_DEPLOY_GOAL=${JSON.stringify(hostile)}`, async () => {
      const error = await planError(sbtProvider.plan(context(single, { SBT_DEPLOY_GOAL: hostile })));
      assert.match(error.message, /SBT_DEPLOY_GOAL/);
      assert.match(error.hint ?? '', /web\/stage/);
    });
  }

  it('CC_SBT_TARGET_DIR + CC_SBT_TARGET_BIN name the start script', async () => {
    const plan = await sbtProvider.plan(
      context(multi, { SBT_DEPLOY_GOAL: 'web/stage', CC_SBT_TARGET_DIR: 'web', CC_SBT_TARGET_BIN: 'web' }),
    );
    assert.deepEqual(plan.start.argv, ['./web/target/universal/stage/bin/web', '-Dhttp.port=8080']);
    assert.deepEqual(plan.warnings, []);
  });

  it('normalises a target dir written with ./ and a trailing slash', async () => {
    const plan = await sbtProvider.plan(
      context(multi, { SBT_DEPLOY_GOAL: 'web/stage', CC_SBT_TARGET_DIR: './web/', CC_SBT_TARGET_BIN: 'web' }),
    );
    assert.deepEqual(plan.start.argv, ['./web/target/universal/stage/bin/web', '-Dhttp.port=8080']);
  });

  it('CC_SBT_TARGET_DIR without SBT_DEPLOY_GOAL warns that the root may not stage', async () => {
    const plan = await sbtProvider.plan(context(multi, { CC_SBT_TARGET_DIR: 'web', CC_SBT_TARGET_BIN: 'web' }));
    assert.equal(plan.warnings.length, 1);
    assert.match(plan.warnings[0]!, /SBT_DEPLOY_GOAL=web\/stage/);
  });

  it('CC_RUN_COMMAND becomes the start command, run by sh as written', async () => {
    const command = 'web/target/universal/stage/bin/web -Dhttp.port=8080 -Dconfig.resource=prod.conf';
    const plan = await sbtProvider.plan(
      context(multi, { SBT_DEPLOY_GOAL: 'web/stage', CC_SBT_TARGET_DIR: 'web', CC_SBT_TARGET_BIN: 'web', CC_RUN_COMMAND: command }),
    );
    assert.deepEqual(plan.start, { label: 'start (CC_RUN_COMMAND)', argv: ['sh', '-c', command] });
    assert.equal(plan.env.JAVA_OPTS, '-Dhttp.port=8080');
    assert.deepEqual(plan.warnings, []);
  });

  it('CC_RUN_COMMAND without the target variables warns that the staged binary is still checked', async () => {
    const plan = await sbtProvider.plan(context(single, { CC_RUN_COMMAND: 'target/universal/stage/bin/scala-single' }));
    assert.deepEqual(plan.start.argv, ['sh', '-c', 'target/universal/stage/bin/scala-single']);
    assert.match(plan.warnings.join('\n'), /CC_RUN_COMMAND is set without CC_SBT_TARGET_BIN/);
  });

  it("leaves the user's JAVA_OPTS alone (it is printed otherwise) and still passes http.port as an argument", async () => {
    const plan = await sbtProvider.plan(context(single, { JAVA_OPTS: '-Xmx256m -Ddb.password=hunter2' }));
    assert.deepEqual(plan.env, { JAVA_HOME: defaultJdk.javaHome });
    assert.deepEqual(plan.start.argv.slice(1), ['-Dhttp.port=8080']);
    assert.doesNotMatch(JSON.stringify(plan), /hunter2/);
  });

  for (const [name, value] of [
    ['CC_SBT_TARGET_DIR', '../other-app'],
    ['CC_SBT_TARGET_DIR', '/etc'],
    ['CC_SBT_TARGET_DIR', 'web/../../..'],
    ['CC_SBT_TARGET_DIR', 'web\n'],
    ['CC_SBT_TARGET_BIN', '../../../bin/sh'],
    ['CC_SBT_TARGET_BIN', 'sub/web'],
    ['CC_SBT_TARGET_BIN', '..'],
    ['CC_SBT_TARGET_BIN', 'web.bat'],
  ] as const) {
    it(`refuses ${name}=${JSON.stringify(value)}`, async () => {
      const env: Record<string, string> = {
        SBT_DEPLOY_GOAL: 'web/stage',
        CC_SBT_TARGET_DIR: 'web',
        CC_SBT_TARGET_BIN: 'web',
        [name]: value,
      };
      const error = await planError(sbtProvider.plan(context(multi, env)));
      assert.match(error.message, new RegExp(name));
    });
  }

  it('CC_JAVA_VERSION picks an installed JDK by major version', async () => {
    for (const jdk of jdks) {
      const plan = await sbtProvider.plan(context(single, { CC_JAVA_VERSION: String(jdk.major) }));
      const chosen = jdks.find((j) => j.major === jdk.major)!;
      assert.equal(plan.toolchain[1]!.version, String(jdk.major));
      assert.equal(plan.build[0]!.argv[0], `${chosen.javaHome}/bin/java`);
      assert.equal(plan.env.JAVA_HOME, chosen.javaHome);
    }
  });

  it('a JDK that is not installed fails with the list of installed ones', async () => {
    const missing = [8, 11, 21, 99].find((m) => !jdks.some((j) => j.major === m))!;
    const error = await planError(sbtProvider.plan(context(single, { CC_JAVA_VERSION: String(missing) })));
    assert.match(error.message, new RegExp(`Java ${missing}, which is not installed`));
    for (const jdk of jdks) assert.ok(error.message.includes(jdk.javaHome), `lists ${jdk.javaHome}`);
    assert.match(error.hint ?? '', /Set CC_JAVA_VERSION to one of/);
  });

  it('a CC_JAVA_VERSION that is not a version fails', async () => {
    const error = await planError(sbtProvider.plan(context(single, { CC_JAVA_VERSION: 'latest; rm -rf /' })));
    assert.match(error.message, /not a Java version/);
  });

  it('without build.properties (or without sbt.version in it) uses the current 1.x', async () => {
    const none = await project('no-properties', {
      'build.sbt': 'enablePlugins(JavaAppPackaging)\n',
      'project/plugins.sbt': 'addSbtPlugin("com.github.sbt" % "sbt-native-packager" % "1.11.7")\n',
    });
    const plan = await sbtProvider.plan(context(none));
    assert.equal(plan.toolchain[0]!.version, DEFAULT_SBT_VERSION);
    assert.match(plan.toolchain[0]!.reason, /no project\/build.properties/);
    const empty = await project('no-version', { 'build.sbt': '', 'project/build.properties': '# nothing\nsbt.log=true\n' });
    assert.equal((await sbtProvider.plan(context(empty))).toolchain[0]!.version, DEFAULT_SBT_VERSION);
  });

  it('reads sbt.version written with spaces or a colon', async () => {
    const dir = await project('colon', { 'build.sbt': '', 'project/build.properties': '# pinned\n sbt.version : 1.12.14 \n' });
    assert.equal((await sbtProvider.plan(context(dir))).toolchain[0]!.version, '1.12.14');
  });

  it('an sbt.version that is not exact fails with an example', async () => {
    const dir = await project('bad-version', { 'build.sbt': '', 'project/build.properties': 'sbt.version=1.x\n' });
    const error = await planError(sbtProvider.plan(context(dir)));
    assert.match(error.message, /sbt.version="1.x"/);
    assert.match(error.hint ?? '', /sbt.version=1\.\d+\.\d+/);
  });

  it('warns when the packager plugin or JavaAppPackaging is missing', async () => {
    const dir = await project('no-packager', { 'build.sbt': 'name := "x"\n', 'project/build.properties': 'sbt.version=1.13.0\n' });
    const plan = await sbtProvider.plan(context(dir));
    assert.equal(plan.warnings.length, 2);
    assert.match(plan.warnings[0]!, /sbt-native-packager/);
    assert.match(plan.warnings[1]!, /enablePlugins\(JavaAppPackaging\)/);
  });

  it('does not warn for a build that stages through a plugin that implies JavaAppPackaging, or through Play', async () => {
    const plugins = 'addSbtPlugin("com.github.sbt" % "sbt-native-packager" % "1.11.1")\n';
    for (const enabled of ['LauncherJarPlugin', 'JavaServerAppPackaging', 'ClasspathJarPlugin', 'JlinkPlugin', 'AshScriptPlugin']) {
      const dir = await project(`stages-${enabled}`, {
        'build.sbt': `lazy val root = (project in file(".")).enablePlugins(${enabled})\n`,
        'project/plugins.sbt': plugins,
        'project/build.properties': 'sbt.version=1.13.0\n',
      });
      assert.deepEqual((await sbtProvider.plan(context(dir))).warnings, [], enabled);
    }
    const play = await project('stages-play', {
      'build.sbt': 'lazy val root = (project in file(".")).enablePlugins(PlayScala)\n',
      'project/plugins.sbt': 'addSbtPlugin("org.playframework" % "sbt-plugin" % "3.0.9")\n',
      'project/build.properties': 'sbt.version=1.13.0\n',
    });
    assert.deepEqual((await sbtProvider.plan(context(play))).warnings, []);
    // A name that only contains a plugin's is not one.
    const lookalike = await project('lookalike', {
      'build.sbt': 'val notJavaAppPackagingReally = 1\n',
      'project/plugins.sbt': plugins,
      'project/build.properties': 'sbt.version=1.13.0\n',
    });
    assert.match((await sbtProvider.plan(context(lookalike))).warnings.join('\n'), /enablePlugins\(JavaAppPackaging\)/);
  });

  it('does not warn about the packager for a goal that does not stage', async () => {
    const dir = await project('custom-goal', { 'build.sbt': 'name := "x"\n', 'project/build.properties': 'sbt.version=1.13.0\n' });
    const plan = await sbtProvider.plan(
      context(dir, { SBT_DEPLOY_GOAL: 'assembly', CC_RUN_COMMAND: 'java -jar x.jar', CC_SBT_TARGET_BIN: 'x' }),
    );
    assert.deepEqual(plan.warnings, []);
  });

  it("keeps sbt's incremental state between builds, every target folder copied into the release too, keyed on the exact sbt and JDK", async (t) => {
    const plan = await sbtProvider.plan(context(single));
    assert.deepEqual(plan.cacheDirs, ['target', 'project/target', 'project/project']);
    assert.deepEqual(plan.cacheDirsInRelease, ['target']);
    assert.deepEqual(plan.cacheKeyInputs, [
      'sbt 1.13.0',
      `java ${defaultJdk.version}${defaultJdk.implementor ? ` (${defaultJdk.implementor})` : ''}`,
    ]);

    // Every module's target (a folder with src/, one or two levels down), the staged one copied.
    const web = await sbtProvider.plan(
      context(multi, { SBT_DEPLOY_GOAL: 'web/stage', CC_SBT_TARGET_DIR: 'web', CC_SBT_TARGET_BIN: 'web' }),
    );
    assert.deepEqual(web.cacheDirs, ['target', 'project/target', 'project/project', 'core/target', 'web/target']);
    assert.deepEqual(web.cacheDirsInRelease, ['target', 'core/target', 'web/target']);
    const nested = await project('nested-modules', {
      'build.sbt': '',
      'modules/api/src/main/scala/A.scala': '',
      '.hidden/src/x': '',
      'project/src/x': '',
      'a/b/c/src/x': '',
    });
    assert.deepEqual((await sbtProvider.plan(context(nested))).cacheDirs, [
      'target',
      'project/target',
      'project/project',
      'modules/api/target',
    ]);

    const other = jdks.find((j) => j.major !== defaultJdk.major);
    if (!other) {
      t.diagnostic('one JDK is installed: a change of JDK is not checked here');
      return;
    }
    const withOther = await sbtProvider.plan(context(single, { CC_JAVA_VERSION: String(other.major) }));
    assert.notDeepEqual(withOther.cacheKeyInputs, plan.cacheKeyInputs, 'another JDK starts from an empty cache');
  });

  it('makes the same plan for a copy of the example (no dependence on where it sits)', async () => {
    const copy = join(scratch, 'copy-of-single');
    await cp(single, copy, { recursive: true });
    const a = await sbtProvider.plan(context(single));
    const b = await sbtProvider.plan(context(copy));
    assert.deepEqual(a, b);
  });
});
