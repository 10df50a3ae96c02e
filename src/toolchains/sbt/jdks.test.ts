import assert from 'node:assert/strict';
import { access } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { PlanError } from '../../core/errors.js';
import { javaMajor, listInstalledJdks, parseRequestedJava, selectJdk } from './jdks.js';
import { runTool } from './run-tool.js';

describe('Java versions', () => {
  it('reads major versions in both numbering schemes', () => {
    assert.equal(javaMajor('17.0.15'), 17);
    assert.equal(javaMajor('1.8.0_392'), 8);
    assert.equal(javaMajor('25'), 25);
    assert.equal(javaMajor('21-ea'), 21);
    assert.equal(javaMajor('x'), undefined);
  });

  it('accepts CC_JAVA_VERSION as a major or a full version, nothing else', () => {
    assert.equal(parseRequestedJava('17'), 17);
    assert.equal(parseRequestedJava(' 21 '), 21);
    assert.equal(parseRequestedJava('1.8'), 8);
    assert.equal(parseRequestedJava('17.0.15'), 17);
    assert.equal(parseRequestedJava('latest'), undefined);
    assert.equal(parseRequestedJava('17; id'), undefined);
  });
});

describe('installed JDKs (this machine)', () => {
  it('finds the java on PATH as the default, with its real version', async () => {
    const jdks = await listInstalledJdks();
    const defaults = jdks.filter((j) => j.isDefault);
    assert.equal(defaults.length, 1, `one default among ${JSON.stringify(jdks)}`);
    const run = await runTool(['java', '-XshowSettings:properties', '-version']);
    const reported = /java\.version = (\S+)/.exec(run.stderr)?.[1];
    assert.equal(defaults[0]!.version, reported);
    assert.equal(jdks[0], defaults[0], 'the default comes first');
  });

  it('lists every JDK folder of /usr/lib/jvm once, whatever links point at it', async () => {
    const jdks = await listInstalledJdks();
    const homes = jdks.map((j) => j.javaHome);
    assert.equal(new Set(homes).size, homes.length);
    for (const jdk of jdks) await access(`${jdk.javaHome}/bin/java`);
    const temurin = '/usr/lib/jvm/temurin-25-jdk-amd64';
    if (
      await access(`${temurin}/bin/java`).then(
        () => true,
        () => false,
      )
    ) {
      assert.ok(
        jdks.some((j) => j.javaHome === temurin && j.major === 25),
        'the Temurin JDK beside OpenJDK is found',
      );
    }
  });

  it('ignores folders that hold no JDK', async () => {
    const jdks = await listInstalledJdks({ roots: ['/usr/lib/jvm', '/etc'], path: '', javaHome: '' });
    assert.ok(jdks.every((j) => j.javaHome.startsWith('/usr/lib/jvm/')));
    assert.ok(
      jdks.every((j) => !j.isDefault),
      'no java on an empty PATH',
    );
  });

  it('selectJdk: default without a request, exact major with one, PlanError listing the installed ones otherwise', async () => {
    const jdks = await listInstalledJdks();
    assert.equal((await selectJdk(undefined)).javaHome, jdks[0]!.javaHome);
    assert.equal((await selectJdk('')).javaHome, jdks[0]!.javaHome);
    for (const jdk of jdks) assert.equal((await selectJdk(String(jdk.major))).major, jdk.major);
    const error = await selectJdk('7').then(
      () => assert.fail('Java 7 is not expected here'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof PlanError);
    assert.match(error.message, /Installed JDKs: /);
    for (const jdk of jdks) assert.ok(error.message.includes(`${jdk.major} (${jdk.version}`));
  });
});
