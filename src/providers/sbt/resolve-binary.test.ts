import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PlanError } from '../plan.js';
import { resolveSbtBinary } from './resolve-binary.js';

let scratch: string;
before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'slipway-sbt-bin-'));
});
after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

let counter = 0;
/** A build folder with the given files; names ending in `*` are made executable. */
async function build(files: string[]): Promise<string> {
  const dir = join(scratch, `build-${++counter}`);
  await mkdir(dir, { recursive: true });
  for (const entry of files) {
    const executable = entry.endsWith('*');
    const path = join(dir, executable ? entry.slice(0, -1) : entry);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, '#!/bin/sh\necho staged\n');
    await chmod(path, executable ? 0o755 : 0o644);
  }
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

describe('resolveSbtBinary', () => {
  it('starts the first script of target/universal/stage/bin with http.port, never the .bat', async () => {
    const dir = await build([
      'target/universal/stage/bin/app.bat*',
      'target/universal/stage/bin/app*',
      'target/universal/stage/bin/zzz*',
      'target/universal/stage/lib/app.jar',
    ]);
    assert.deepEqual(await resolveSbtBinary(dir, {}), ['./target/universal/stage/bin/app', '-Dhttp.port=8080']);
  });

  it('skips files that are not executable', async () => {
    const dir = await build(['target/universal/stage/bin/aaa-notes', 'target/universal/stage/bin/app*']);
    assert.deepEqual(await resolveSbtBinary(dir, {}), ['./target/universal/stage/bin/app', '-Dhttp.port=8080']);
  });

  it('CC_SBT_TARGET_DIR + CC_SBT_TARGET_BIN locate the script of a module', async () => {
    const dir = await build([
      'web/target/universal/stage/bin/web*',
      'web/target/universal/stage/bin/admin*',
      'web/target/universal/stage/bin/web.bat',
    ]);
    assert.deepEqual(await resolveSbtBinary(dir, { CC_SBT_TARGET_DIR: 'web', CC_SBT_TARGET_BIN: 'web' }), [
      './web/target/universal/stage/bin/web',
      '-Dhttp.port=8080',
    ]);
  });

  it('CC_SBT_TARGET_DIR alone takes the first script of that module', async () => {
    const dir = await build(['services/api/target/universal/stage/bin/api*']);
    assert.deepEqual(await resolveSbtBinary(dir, { CC_SBT_TARGET_DIR: 'services/api' }), [
      './services/api/target/universal/stage/bin/api',
      '-Dhttp.port=8080',
    ]);
  });

  it('with nothing at the root, lists the staged scripts found and names the variables to set', async () => {
    const dir = await build([
      'web/target/universal/stage/bin/web*',
      'web/target/universal/stage/bin/web.bat',
      'core/target/scala-2.13/classes/x.class',
    ]);
    const error = await planError(resolveSbtBinary(dir, {}));
    assert.match(error.message, /No binary to start: target\/universal\/stage\/bin\/ holds no executable script/);
    assert.match(error.message, /Staged scripts found: web\/target\/universal\/stage\/bin\/web\./);
    assert.match(error.hint ?? '', /CC_SBT_TARGET_DIR=web and CC_SBT_TARGET_BIN=web/);
    assert.match(error.hint ?? '', /SBT_DEPLOY_GOAL=web\/stage/);
  });

  it('a CC_SBT_TARGET_BIN that does not exist lists what is there', async () => {
    const dir = await build(['web/target/universal/stage/bin/web-server*']);
    const error = await planError(resolveSbtBinary(dir, { CC_SBT_TARGET_DIR: 'web', CC_SBT_TARGET_BIN: 'web' }));
    assert.match(error.message, /web\/target\/universal\/stage\/bin\/web does not exist/);
    assert.match(error.message, /web\/target\/universal\/stage\/bin\/web-server/);
    assert.match(error.hint ?? '', /CC_SBT_TARGET_BIN/);
  });

  it('when nothing was staged at all, says so and explains how to stage', async () => {
    const dir = await build(['target/scala-2.13/classes/Main.class']);
    const error = await planError(resolveSbtBinary(dir, {}));
    assert.match(error.message, /No staged script was found anywhere/);
    assert.match(error.hint ?? '', /JavaAppPackaging/);
    assert.match(error.hint ?? '', /CC_SBT_TARGET_DIR/);
  });

  it('refuses a module folder that is a symbolic link out of the build', async () => {
    const outside = await build(['target/universal/stage/bin/evil*']);
    const dir = await build(['README.md']);
    await symlink(outside, join(dir, 'web'));
    const error = await planError(resolveSbtBinary(dir, { CC_SBT_TARGET_DIR: 'web', CC_SBT_TARGET_BIN: 'evil' }));
    assert.match(error.message, /^web \(on the way to web\/target\/universal\/stage\/bin\/evil\) is a symbolic link to an absolute path/);
    assert.ok(!error.message.includes(outside), 'where the link points is not said');
    const viaDefault = await planError(resolveSbtBinary(dir, { CC_SBT_TARGET_DIR: 'web' }));
    assert.match(viaDefault.message, /^web \(on the way to web\/target\/universal\/stage\/bin\) is a symbolic link to an absolute path/);
    await symlink('../build-1', join(dir, 'relative-web'));
    const relative = await planError(resolveSbtBinary(dir, { CC_SBT_TARGET_DIR: 'relative-web' }));
    assert.match(relative.message, /^relative-web \(on the way to .*\) is a symbolic link to a path outside the build folder\.$/);
  });

  it('refuses a staged script that is a symbolic link out of the build', async () => {
    const dir = await build(['target/universal/stage/bin/.keep']);
    await symlink('/bin/sh', join(dir, 'target/universal/stage/bin/app'));
    const error = await planError(resolveSbtBinary(dir, { CC_SBT_TARGET_BIN: 'app' }));
    assert.equal(
      error.message,
      'target/universal/stage/bin/app is a symbolic link to an absolute path, which slipway does not follow in the build folder.',
    );
    // Without CC_SBT_TARGET_BIN the escaping link is skipped rather than started.
    const skipped = await planError(resolveSbtBinary(dir, {}));
    assert.match(skipped.message, /holds no executable script/);
  });

  it('refuses escaping variables before touching the disk', async () => {
    const dir = await build(['target/universal/stage/bin/app*']);
    for (const env of <Record<string, string>[]>[
      { CC_SBT_TARGET_DIR: '../' },
      { CC_SBT_TARGET_DIR: '/tmp' },
      { CC_SBT_TARGET_BIN: '../../../../bin/sh' },
      { CC_SBT_TARGET_BIN: 'app.bat' },
    ]) {
      await planError(resolveSbtBinary(dir, env));
    }
  });

  it('CC_RUN_COMMAND runs as written by sh, once the staged binary is found', async () => {
    const dir = await build(['web/target/universal/stage/bin/web*']);
    const env = {
      CC_SBT_TARGET_DIR: 'web',
      CC_SBT_TARGET_BIN: 'web',
      CC_RUN_COMMAND: 'web/target/universal/stage/bin/web -Dconfig.resource=prod.conf',
    };
    assert.deepEqual(await resolveSbtBinary(dir, env), ['sh', '-c', env.CC_RUN_COMMAND]);
  });

  it('CC_RUN_COMMAND with target variables that designate nothing fails like a missing binary', async () => {
    const dir = await build(['web/target/universal/stage/bin/web*']);
    const error = await planError(resolveSbtBinary(dir, { CC_SBT_TARGET_DIR: 'api', CC_SBT_TARGET_BIN: 'api', CC_RUN_COMMAND: 'echo hi' }));
    assert.match(error.message, /api\/target\/universal\/stage\/bin\/api does not exist/);
  });

  it('reports a named script that is not executable', async () => {
    const dir = await build(['target/universal/stage/bin/app']);
    const error = await planError(resolveSbtBinary(dir, { CC_SBT_TARGET_BIN: 'app' }));
    assert.match(error.message, /not executable/);
  });
});
