import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { installReuse, type InstallReuseInput } from './install-reuse.js';

const NPM: InstallReuseInput = {
  choice: { manager: 'npm', npmCommand: 'install' },
  scripts: { start: 'node server.js' },
  dependencies: { express: '4.21.2' },
  devDependencies: {},
  workspaces: false,
  toolchain: [
    { name: 'node', version: '24.11.0', reason: 'default' },
    { name: 'npm', version: '11.6.1', reason: 'shipped with Node.js' },
  ],
  installDevDependencies: false,
  env: { NODE_ENV: 'production' },
};

describe('skipping an install whose inputs did not change', () => {
  it('names package.json, every lockfile and the settings files, the exact tool versions and the devDependencies choice', () => {
    const reuse = installReuse(NPM);
    assert.ok(reuse.inputs);
    for (const file of [
      'package.json',
      'package-lock.json',
      'npm-shrinkwrap.json',
      'yarn.lock',
      'pnpm-lock.yaml',
      'bun.lock',
      'bun.lockb',
      '.npmrc',
      '.yarnrc.yml',
    ]) {
      assert.ok(reuse.inputs.files.includes(file), file);
    }
    assert.deepEqual(reuse.inputs.settings, ['node 24.11.0', 'npm 11.6.1', 'without devDependencies']);
    assert.match(
      reuse.note,
      /^The install is skipped when the kept node_modules was installed by an earlier successful build from the same package\.json, lockfile/,
    );
  });

  it('changes with the manager version, the devDependencies choice and package-manager variables, never showing their values', () => {
    const base = installReuse(NPM).inputs!.settings;
    assert.notDeepEqual(
      installReuse({ ...NPM, toolchain: [NPM.toolchain[0]!, { name: 'npm', version: '11.6.2', reason: 'x' }] }).inputs!.settings,
      base,
    );
    assert.notDeepEqual(installReuse({ ...NPM, installDevDependencies: true }).inputs!.settings, base);
    const token = installReuse({ ...NPM, env: { ...NPM.env, npm_config__authToken: 'secret-token-1' } }).inputs!.settings;
    const other = installReuse({ ...NPM, env: { ...NPM.env, npm_config__authToken: 'secret-token-2' } }).inputs!.settings;
    assert.notDeepEqual(token, other);
    assert.equal(
      token.some((s) => s.includes('secret-token')),
      false,
    );
    assert.ok(token.some((s) => s.startsWith('variable npm_config__authToken ')));
    // Variables no package manager reads do not force an install.
    assert.deepEqual(installReuse({ ...NPM, env: { ...NPM.env, GREETING: 'hello' } }).inputs!.settings, base);
  });

  it('applies to pnpm, Yarn 1 and Bun too', () => {
    for (const manager of ['pnpm', 'yarn1', 'bun'] as const)
      assert.ok(installReuse({ ...NPM, choice: { manager, npmCommand: 'install' } }).inputs, manager);
  });

  it('never skips an install that does more than write node_modules from the lockfile, and says why', () => {
    const cases: Array<[Partial<InstallReuseInput>, RegExp]> = [
      [{ choice: { manager: 'custom', npmCommand: 'install' } }, /CC_CUSTOM_BUILD_TOOL decides/],
      [{ choice: { manager: 'yarn-berry', npmCommand: 'install' } }, /Yarn berry keeps its install state/],
      [{ choice: { manager: 'npm', npmCommand: 'ci' } }, /npm ci deletes node_modules/],
      [{ scripts: { start: 'node .', postinstall: 'tsc' } }, /package\.json has scripts\.postinstall, which the install runs/],
      [{ scripts: { prepare: 'husky' } }, /scripts\.prepare/],
      [{ workspaces: true }, /workspaces/],
      [{ dependencies: { lib: 'file:./lib' } }, /lib comes from the repository's own folders/],
      [{ devDependencies: { tools: '../tools' } }, /tools comes from/],
    ];
    for (const [change, reason] of cases) {
      const reuse = installReuse({ ...NPM, ...change });
      assert.equal(reuse.inputs, undefined, JSON.stringify(change));
      assert.match(reuse.note, /^The install runs on every build, even with an unchanged lockfile: /);
      assert.match(reuse.note, reason);
    }
  });
});
