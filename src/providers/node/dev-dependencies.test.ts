import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideDevDependencies, devFlagsFor } from './dev-dependencies.js';
import { installPlan } from './install-commands.js';
import type { PackageManagerChoice } from './detect-package-manager.js';
import type { PlanCommand } from '../plan.js';

/** The install command: the one build step an install plan has. */
function installStep(plan: { build: PlanCommand[] }): PlanCommand {
  assert.equal(plan.build.length, 1, 'an install plan has one build step');
  return plan.build[0]!; // length checked above
}

describe('devDependencies: CC_NODE_DEV_DEPENDENCIES, then NODE_ENV', () => {
  it('follows the table row by row', () => {
    const rows: Array<[Record<string, string>, boolean]> = [
      [{ NODE_ENV: 'development', CC_NODE_DEV_DEPENDENCIES: 'install' }, true],
      [{ NODE_ENV: 'development', CC_NODE_DEV_DEPENDENCIES: 'ignore' }, false],
      [{ CC_NODE_DEV_DEPENDENCIES: 'install' }, true],
      [{ CC_NODE_DEV_DEPENDENCIES: 'ignore' }, false],
      [{ NODE_ENV: 'production', CC_NODE_DEV_DEPENDENCIES: 'install' }, true],
      [{ NODE_ENV: 'production', CC_NODE_DEV_DEPENDENCIES: 'ignore' }, false],
      [{ NODE_ENV: 'production' }, false],
      [{}, true],
    ];
    for (const [env, install] of rows) assert.equal(decideDevDependencies(env).install, install, JSON.stringify(env));
  });

  it('passes each manager its own explicit flags', () => {
    assert.deepEqual(devFlagsFor('npm', true), ['--include=dev']);
    assert.deepEqual(devFlagsFor('npm', false), ['--omit=dev']);
    assert.deepEqual(devFlagsFor('pnpm', true), ['--prod=false']);
    assert.deepEqual(devFlagsFor('pnpm', false), ['--prod']);
    assert.deepEqual(devFlagsFor('yarn1', true), ['--production=false']);
    assert.deepEqual(devFlagsFor('yarn1', false), ['--production=true']);
    assert.deepEqual(devFlagsFor('bun', true), []);
    assert.deepEqual(devFlagsFor('bun', false), ['--production']);
  });

  it('Yarn berry: plain install with dev, workspaces focus without (built in on 4, plugin on 3)', () => {
    const berry: PackageManagerChoice = { manager: 'yarn-berry', npmCommand: 'install', reason: '', warnings: [], notes: [] };
    assert.deepEqual(
      installStep(installPlan({ choice: berry, installDevDependencies: true, berryMajor: 4, installEnv: {}, buildDir: '/build' })).argv,
      ['yarn', 'install'],
    );
    assert.deepEqual(
      installStep(installPlan({ choice: berry, installDevDependencies: false, berryMajor: 4, installEnv: {}, buildDir: '/build' })).argv,
      ['yarn', 'workspaces', 'focus', '--all', '--production'],
    );
    const withPlugin = installPlan({
      choice: berry,
      installDevDependencies: false,
      berryMajor: 3,
      projectYarnrcYml: 'plugins:\n  - path: .yarn/plugins/@yarnpkg/plugin-workspace-tools.cjs\n',
      installEnv: {},
      buildDir: '/build',
    });
    assert.deepEqual(installStep(withPlugin).argv, ['yarn', 'workspaces', 'focus', '--all', '--production']);
    const withoutPlugin = installPlan({ choice: berry, installDevDependencies: false, berryMajor: 3, installEnv: {}, buildDir: '/build' });
    assert.deepEqual(installStep(withoutPlugin).argv, ['yarn', 'install']);
    assert.match(withoutPlugin.warnings[0] ?? '', /devDependencies are installed anyway: Yarn 3 .*yarn plugin import workspace-tools/);
  });

  it("Yarn berry keeps a zero-install project's own cache settings", () => {
    const berry: PackageManagerChoice = { manager: 'yarn-berry', npmCommand: 'install', reason: '', warnings: [], notes: [] };
    const plan = installPlan({
      choice: berry,
      installDevDependencies: true,
      berryMajor: 4,
      projectYarnrcYml: 'enableGlobalCache: false\n',
      installEnv: {},
      buildDir: '/build',
    });
    assert.equal(installStep(plan).env?.YARN_CACHE_FOLDER, undefined);
    assert.deepEqual(plan.cacheDirs, []);
  });

  it('a custom build command gets the decision as the settings npm, Yarn 1, pnpm 10 and Bun read', () => {
    const custom: PackageManagerChoice = {
      manager: 'custom',
      npmCommand: 'install',
      customCommand: 'npm ci',
      reason: '',
      warnings: [],
      notes: [],
    };
    const withDev = installPlan({ choice: custom, installDevDependencies: true, installEnv: {}, buildDir: '/build' });
    assert.equal(installStep(withDev).env?.npm_config_include, 'dev');
    assert.equal(installStep(withDev).env?.YARN_PRODUCTION, 'false');
    assert.equal(installStep(withDev).env?.npm_config_omit, undefined);
    assert.equal(withDev.files, undefined);
    const without = installPlan({ choice: custom, installDevDependencies: false, installEnv: {}, buildDir: '/build' });
    assert.equal(installStep(without).env?.npm_config_omit, 'dev');
    assert.equal(installStep(without).env?.YARN_PRODUCTION, 'true');
    assert.equal(installStep(without).env?.npm_config_production, 'true');
    assert.equal(installStep(without).env?.XDG_CONFIG_HOME, '/build/.slipway-cache/config');
    assert.deepEqual(without.files, [
      { path: '.slipway-cache/config/.bunfig.toml', content: '[install]\nproduction = true\n', secret: false },
    ]);
  });
});
