/**
 * The build plan of every example app, written out by hand from docs/behaviour.md (Variables, Project files, Node.js and Bun builds, Private dependencies, Versions)
 * and compared in full: a change in any decision shows up here as a readable difference.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { BuildPlan, PlanCommand } from '../plan.js';
import { examplePath, exampleEnv, planFor } from '../../../test/support/node-provider-fixtures.js';

const NODE_DEFAULT = { name: 'node', version: '24.11.0', reason: 'default Node.js version' };
const NPM_DEFAULT = { name: 'npm', version: '11.6.1', reason: 'npm shipped with Node.js 24.11.0' };
const SYSTEM_YARN = { name: 'yarn', version: '1.22.22', reason: 'system Yarn' };
const QUIET_NPM = { npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
const NODE_ENV_WARNING =
  'NODE_ENV is not set: an app in production needs NODE_ENV=production (`slipway env set NODE_ENV production`). Until then devDependencies are installed and most frameworks run in development mode.';
const SCRIPT_SHELL = { npm_config_script_shell: 'bash' };
/** What bash is given before the start script: the release's binaries first, npm's lifecycle variables. */
const PRELUDE =
  'export PATH="$PWD/node_modules/.bin:$PATH" npm_lifecycle_event=start npm_lifecycle_script="$1" npm_package_name="$2" npm_package_version="$3" npm_config_user_agent="$4"; ';

/** npm_config_user_agent as each manager sets it, on Node.js 24.11.0. */
const agent = (tool: string) => `${tool} node/v24.11.0`;
const NPM_AGENT = agent('npm/11.6.1');

/** Under Plug'n'Play: NODE_OPTIONS loads .pnp.cjs (and its ESM loader when there is one), as yarn run does. */
const PNP =
  'if [ -f .pnp.cjs ]; then NODE_OPTIONS="--require $PWD/.pnp.cjs${NODE_OPTIONS:+ $NODE_OPTIONS}"; ' +
  'if [ -f .pnp.loader.mjs ]; then NODE_OPTIONS="$NODE_OPTIONS --experimental-loader file://$PWD/.pnp.loader.mjs"; fi; export NODE_OPTIONS; fi; ';

/** scripts.start of an example run by bash, with no package manager staying beside the app. */
function directStart(example: string, userAgent = NPM_AGENT, pnp = false): PlanCommand {
  const pkg = JSON.parse(readFileSync(path.join(examplePath(example), 'package.json'), 'utf8')) as {
    name?: string;
    version?: string;
    scripts: { start: string };
  };
  return {
    label: 'start script',
    argv: [
      'bash',
      '-c',
      `${PRELUDE}${pnp ? PNP : ''}exec bash -c "$1"`,
      'start',
      pkg.scripts.start,
      pkg.name ?? '',
      pkg.version ?? '',
      userAgent,
    ],
    written: { command: pkg.scripts.start, source: 'scripts.start in package.json' },
  };
}

function npmInstall(dev: boolean, command: 'install' | 'ci' = 'install'): PlanCommand {
  return {
    label: `npm ${command} (${dev ? 'with' : 'without'} devDependencies)`,
    argv: ['npm', command, dev ? '--include=dev' : '--omit=dev'],
    env: { ...QUIET_NPM, npm_config_cache: '.slipway-cache/npm' },
  };
}

/** The parts of a plan that decide what runs; notes, cache keys and install reuse are checked separately. */
function core(plan: BuildPlan) {
  const { notes: _notes, cacheKeyInputs: _cacheKeyInputs, build, ...rest } = plan;
  return { ...rest, build: build.map(({ skipWhenUnchanged: _inputs, ...command }) => command) };
}

async function examplePlan(name: string, variant?: number): Promise<BuildPlan> {
  return planFor(examplePath(name), await exampleEnv(name, variant));
}

/** Yarn 4's production install, as both Yarn 4 examples (node-modules and Plug'n'Play) build. */
const YARN4_PRODUCTION_FOCUS = {
  label: 'yarn workspaces focus --all --production (Yarn 4, without devDependencies)',
  argv: ['yarn', 'workspaces', 'focus', '--all', '--production'],
  env: {
    YARN_ENABLE_TELEMETRY: '0',
    YARN_ENABLE_IMMUTABLE_INSTALLS: 'false',
    YARN_ENABLE_PROGRESS_BARS: 'false',
    YARN_ENABLE_GLOBAL_CACHE: 'false',
    YARN_CACHE_FOLDER: '.slipway-cache/yarn-berry',
  },
};
describe('build plans of the example apps', () => {
  it('node-npm: npm install with devDependencies (NODE_ENV unset), prestart run by npm around start', async () => {
    const plan = await examplePlan('node-npm');
    assert.deepEqual(core(plan), {
      provider: 'node',
      toolchain: [NODE_DEFAULT, NPM_DEFAULT, SYSTEM_YARN],
      env: { npm_config_update_notifier: 'false' },
      files: [],
      build: [npmInstall(true)],
      beforeStart: [{ label: 'prestart script', argv: ['npm', 'run', 'prestart'], env: SCRIPT_SHELL }],
      start: directStart('node-npm'),
      cacheDirs: ['.slipway-cache/npm', 'node_modules'],
      cacheDirsInRelease: ['node_modules'],
      warnings: [NODE_ENV_WARNING],
    });
    assert.ok(plan.notes.includes('Package manager: npm, because package-lock.json is present: npm install (the default).'));
    assert.ok(
      plan.notes.includes('Build scripts preinstall, install, postinstall: run once each by the install command itself, in that order.'),
    );
    assert.ok(
      plan.notes.includes(
        'Start command: scripts.start run by bash with node_modules/.bin on PATH, as `npm run start` would run it but without the package manager staying beside the app, after prestart.',
      ),
      plan.notes.join('\n'),
    );
  });

  it('node-npm-ci: npm ci without devDependencies (NODE_ENV=production)', async () => {
    const plan = await examplePlan('node-npm-ci');
    assert.deepEqual(core(plan), {
      provider: 'node',
      toolchain: [NODE_DEFAULT, NPM_DEFAULT, SYSTEM_YARN],
      env: { npm_config_update_notifier: 'false' },
      files: [],
      build: [npmInstall(false, 'ci')],
      beforeStart: [],
      start: directStart('node-npm-ci'),
      cacheDirs: ['.slipway-cache/npm'],
      warnings: [],
    });
  });

  it('node-pnpm: pnpm pinned by packageManager, --prod explicit', async () => {
    const plan = await examplePlan('node-pnpm');
    assert.deepEqual(core(plan), {
      provider: 'node',
      toolchain: [
        NODE_DEFAULT,
        NPM_DEFAULT,
        { name: 'pnpm', version: '10.34.9', reason: '"packageManager": "pnpm@10.34.9" in package.json' },
        SYSTEM_YARN,
      ],
      env: { npm_config_update_notifier: 'false' },
      files: [],
      build: [
        {
          label: 'pnpm install (without devDependencies)',
          argv: ['pnpm', 'install', '--prod', '--no-frozen-lockfile'],
          env: { npm_config_update_notifier: 'false', npm_config_store_dir: '${SLIPWAY_APP_CACHE}/pnpm-store' },
        },
      ],
      beforeStart: [
        {
          label: 'prestart script',
          argv: ['pnpm', 'run', 'prestart'],
          env: { ...SCRIPT_SHELL, pnpm_config_verify_deps_before_run: 'false' },
        },
      ],
      start: directStart('node-pnpm', agent('pnpm/10.34.9')),
      cacheDirs: ['node_modules'],
      cacheDirsInRelease: ['node_modules'],
      warnings: [],
    });
  });

  it('node-yarn-berry: Yarn 4 from packageManager, production install through workspaces focus, prestart before start', async () => {
    const plan = await examplePlan('node-yarn-berry');
    assert.deepEqual(core(plan), {
      provider: 'node',
      toolchain: [
        NODE_DEFAULT,
        NPM_DEFAULT,
        { name: 'yarn', version: '4.18.1', reason: '"packageManager": "yarn@4.18.1" in package.json' },
      ],
      env: { npm_config_update_notifier: 'false' },
      files: [],
      build: [YARN4_PRODUCTION_FOCUS],
      beforeStart: [{ label: 'prestart script', argv: ['yarn', 'run', 'prestart'] }],
      start: directStart('node-yarn-berry', agent('yarn/4.18.1')),
      cacheDirs: ['.slipway-cache/yarn-berry', 'node_modules'],
      cacheDirsInRelease: ['node_modules'],
      warnings: [],
    });
  });

  it("node-yarn-pnp: Yarn 4 with Plug'n'Play keeps the cache folder .pnp.cjs loads from in the release", async () => {
    const plan = await examplePlan('node-yarn-pnp');
    assert.deepEqual(core(plan), {
      provider: 'node',
      toolchain: [
        NODE_DEFAULT,
        NPM_DEFAULT,
        { name: 'yarn', version: '4.18.1', reason: '"packageManager": "yarn@4.18.1" in package.json' },
      ],
      env: { npm_config_update_notifier: 'false' },
      files: [],
      build: [YARN4_PRODUCTION_FOCUS],
      beforeStart: [],
      start: directStart('node-yarn-pnp', agent('yarn/4.18.1'), true),
      cacheDirs: ['.slipway-cache/yarn-berry'],
      cacheDirsInRelease: ['.slipway-cache/yarn-berry'],
      warnings: [],
    });
    assert.ok(
      plan.notes.some((n) =>
        n.startsWith("Yarn berry with Plug'n'Play: .pnp.cjs loads packages from the zip files of .slipway-cache/yarn-berry"),
      ),
      plan.notes.join('\n'),
    );
    // The same project with a node_modules linker, from the app's environment, moves its cache out and keeps node_modules.
    const linked = await planFor(examplePath('node-yarn-pnp'), { NODE_ENV: 'production', YARN_NODE_LINKER: 'node-modules' });
    assert.deepEqual(linked.cacheDirs, ['.slipway-cache/yarn-berry', 'node_modules']);
    assert.deepEqual(linked.cacheDirsInRelease, ['node_modules']);

    // A start script of several commands may call several binaries, which only Yarn finds under Plug'n'Play.
    const dir = mkdtempSync(path.join(tmpdir(), 'slipway-pnp-bin-'));
    try {
      cpSync(examplePath('node-yarn-pnp'), dir, { recursive: true });
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ ...pkg, scripts: { start: 'migrate-it && serve-it --port 8080' } }));
      const plan = await planFor(dir, { NODE_ENV: 'production' });
      assert.deepEqual(plan.start, {
        label: 'start script',
        argv: ['yarn', 'run', 'start'],
        written: { command: 'migrate-it && serve-it --port 8080', source: 'scripts.start in package.json, run by `yarn run start`' },
      });
      assert.deepEqual(plan.build, [YARN4_PRODUCTION_FOCUS], 'nothing to resolve');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("node-yarn-pnp-bin: a start script naming a dependency's binary is resolved with yarn bin after the install and run by node", async () => {
    const plan = await examplePlan('node-yarn-pnp-bin');
    const resolve = plan.build[1]!;
    assert.deepEqual(plan.build[0], YARN4_PRODUCTION_FOCUS);
    assert.equal(plan.build.length, 2);
    // The name is an argument of a fixed program, and yarn bin sees the install's cache settings.
    assert.deepEqual(resolve.argv.slice(0, 2), ['bash', '-c']);
    assert.deepEqual(resolve.argv.slice(3), ['yarn-bin', 'micro']);
    assert.match(resolve.argv[2]!, /yarn bin "\$1"/);
    assert.deepEqual(resolve.env, YARN4_PRODUCTION_FOCUS.env);
    assert.deepEqual(plan.beforeStart, []);
    const [bash, dashC, program, ...args] = plan.start.argv;
    assert.deepEqual([bash, dashC], ['bash', '-c']);
    assert.ok(program!.startsWith(PRELUDE + PNP), program);
    assert.match(program!, /exec bash -c "\$5" start "\$slipway_binary"; else exec bash -c "\$1"; fi$/);
    assert.deepEqual(args, [
      'start',
      'micro --listen tcp://0.0.0.0:$PORT handler.js',
      'slipway-example-yarn-pnp-bin',
      '1.0.0',
      agent('yarn/4.18.1'),
      'slipway_binary=$1; shift; exec node "$slipway_binary" --listen tcp://0.0.0.0:$PORT handler.js',
    ]);
  });

  it('node-yarn1: the system Yarn 1.22.22 with a deprecation warning', async () => {
    const plan = await examplePlan('node-yarn1');
    assert.deepEqual(core(plan), {
      provider: 'node',
      toolchain: [NODE_DEFAULT, NPM_DEFAULT, SYSTEM_YARN],
      env: { npm_config_update_notifier: 'false' },
      files: [],
      build: [
        {
          label: 'yarn install (Yarn 1, with devDependencies)',
          argv: ['yarn', 'install', '--production=false', '--non-interactive'],
          env: { YARN_CACHE_FOLDER: '.slipway-cache/yarn' },
        },
      ],
      beforeStart: [{ label: 'prestart script', argv: ['yarn', 'run', 'prestart'], env: SCRIPT_SHELL }],
      start: directStart('node-yarn1', agent('yarn/1.22.22')),
      cacheDirs: ['.slipway-cache/yarn', 'node_modules'],
      cacheDirsInRelease: ['node_modules'],
      warnings: [
        'Yarn 1.x is deprecated (it gets no more updates). Move to Yarn 4: run `yarn set version stable` and `yarn install` locally, commit package.json (its "packageManager" field) and the new yarn.lock.',
        NODE_ENV_WARNING,
      ],
    });
  });

  it('node-bun: Bun 1.3.1 installs with --production and runs the start script', async () => {
    const plan = await examplePlan('node-bun');
    assert.deepEqual(core(plan), {
      provider: 'node',
      toolchain: [
        { ...NODE_DEFAULT, reason: 'default Node.js version; for scripts and tools that call node, Bun runs the app' },
        NPM_DEFAULT,
        SYSTEM_YARN,
        { name: 'bun', version: '1.3.1', reason: 'default Bun version' },
      ],
      env: { npm_config_update_notifier: 'false' },
      files: [],
      build: [
        {
          label: 'bun install (without devDependencies)',
          argv: ['bun', 'install', '--production'],
          env: { BUN_INSTALL_CACHE_DIR: '.slipway-cache/bun' },
        },
      ],
      beforeStart: [],
      start: directStart('node-bun', agent('bun/1.3.1')),
      cacheDirs: ['.slipway-cache/bun', 'node_modules'],
      cacheDirsInRelease: ['node_modules'],
      warnings: [],
    });
  });

  it('node-custom: CC_CUSTOM_BUILD_TOOL as the install step', async () => {
    const plan = await examplePlan('node-custom');
    assert.deepEqual(plan.build, [
      {
        label: 'CC_CUSTOM_BUILD_TOOL',
        argv: ['bash', '-c', 'npm install && npm run generate'],
        // No NODE_ENV: devDependencies installed, and the managers the command runs are told so.
        env: {
          ...QUIET_NPM,
          npm_config_cache: '.slipway-cache/npm',
          YARN_CACHE_FOLDER: '.slipway-cache/yarn',
          npm_config_include: 'dev',
          YARN_PRODUCTION: 'false',
        },
      },
    ]);
    assert.deepEqual(plan.start, directStart('node-custom'));
    assert.deepEqual(plan.toolchain, [NODE_DEFAULT, NPM_DEFAULT, SYSTEM_YARN]);
  });

  it('node-custom: CC_NODE_DEV_DEPENDENCIES reaches the custom command, whatever NODE_ENV says', async () => {
    const dir = examplePath('node-custom');
    for (const [variant, install] of [
      [0, true],
      [1, false],
      [2, true],
      [3, false],
    ] as const) {
      const plan = await examplePlan('node-custom', variant);
      const env = plan.build[0]!.env!;
      if (install) {
        assert.equal(env.npm_config_include, 'dev', `variant ${variant}`);
        assert.equal(env.YARN_PRODUCTION, 'false', `variant ${variant}`);
        assert.deepEqual(plan.files, [], `variant ${variant}`);
      } else {
        assert.equal(env.npm_config_omit, 'dev', `variant ${variant}`);
        assert.equal(env.YARN_PRODUCTION, 'true', `variant ${variant}`);
        assert.equal(env.npm_config_production, 'true', `variant ${variant}`);
        assert.equal(env.XDG_CONFIG_HOME, path.join(dir, '.slipway-cache/config'), `variant ${variant}`);
        assert.deepEqual(
          plan.files,
          [{ path: '.slipway-cache/config/.bunfig.toml', content: '[install]\nproduction = true\n', secret: false }],
          `variant ${variant}`,
        );
      }
    }
  });

  it('node-engines-pin: engines.node "22.x" wins over CC_NODE_VERSION=20, with an older npm line kept at 11.6.1', async () => {
    const plan = await examplePlan('node-engines-pin');
    assert.deepEqual(plan.toolchain, [
      { name: 'node', version: '22.21.1', reason: 'engines.node "22.x" in package.json' },
      { name: 'npm', version: '11.6.1', reason: 'default npm version' },
      SYSTEM_YARN,
    ]);
    assert.ok(plan.notes.includes('CC_NODE_VERSION=20 is not used: engines.node in package.json takes priority over it.'));
    assert.deepEqual(core(plan).build, [npmInstall(false)]);
  });

  it('node-version-minor: CC_NODE_VERSION=22.11 picks the newest 22.11.x', async () => {
    const plan = await examplePlan('node-version-minor');
    assert.deepEqual(plan.toolchain[0], { name: 'node', version: '22.11.0', reason: 'CC_NODE_VERSION=22.11' });
    assert.deepEqual(plan.toolchain[1], { name: 'npm', version: '11.6.1', reason: 'default npm version' });
  });

  it('node-dev-deps: every row of the devDependencies table', async () => {
    const expected = [true, false, false, true];
    for (const [variant, dev] of expected.entries()) {
      const plan = await examplePlan('node-dev-deps', variant);
      assert.deepEqual(core(plan).build, [npmInstall(dev)], `variant ${variant}`);
    }
  });

  it('node-private-registry: NPM_TOKEN and CC_NPM_REGISTRY give a secret credentials file for that host alone', async () => {
    const dir = examplePath('node-private-registry');
    const plan = await planFor(dir, { NPM_TOKEN: 'tok-123', CC_NPM_REGISTRY: '127.0.0.1:4873', NODE_ENV: 'production' });
    assert.deepEqual(plan.files, [
      {
        path: '.slipway-cache/config/.npmrc',
        secret: true,
        content:
          '# Registry credentials added by slipway for the build; removed before the app starts.\n' +
          '//127.0.0.1:4873/:_authToken=tok-123\n',
      },
    ]);
    const install = npmInstall(false);
    // Read as npm's user configuration; the registry of every package stays the default one.
    assert.deepEqual(core(plan).build, [
      { ...install, env: { ...install.env, npm_config_userconfig: path.join(dir, '.slipway-cache/config/.npmrc') } },
    ]);
    // The example commits no .npmrc (its tests write one naming their registry): nothing sends a package to that host.
    assert.ok(
      plan.warnings.some((w) =>
        w.startsWith('CC_NPM_REGISTRY says where the credentials go (//127.0.0.1:4873/), not where packages come from'),
      ),
      plan.warnings.join('\n'),
    );
  });

  it('node-deno-mise: Deno from mise.toml at an exact version, started by the start script', async () => {
    const plan = await examplePlan('node-deno-mise');
    assert.deepEqual(plan.toolchain, [
      NODE_DEFAULT,
      NPM_DEFAULT,
      SYSTEM_YARN,
      { name: 'deno', version: '2.9.6', reason: 'deno = "2" in mise.toml' },
    ]);
    assert.deepEqual(plan.start, directStart('node-deno-mise'));
    assert.deepEqual(plan.warnings, []);
  });

  it('node-main-without-start: the main file runs with node, after prestart, then poststart when it ends cleanly', async () => {
    const plan = await examplePlan('node-main-without-start');
    assert.deepEqual(plan.beforeStart, [
      { label: 'prestart script', argv: ['npm', 'run', 'prestart'], env: { npm_config_script_shell: 'bash' } },
    ]);
    // The main file is an argument of a fixed script, never part of it.
    assert.deepEqual(plan.start, {
      label: 'node server.js, then poststart',
      argv: ['bash', '-c', 'node "$@" && exec npm run poststart', 'start', './server.js'],
      env: { npm_config_script_shell: 'bash' },
      written: { command: 'node server.js', source: 'main in package.json, then scripts.poststart when it exits with status 0' },
    });
    assert.ok(
      plan.notes.includes(
        'Start command: no scripts.start, so the main file runs with node (server.js), after prestart, then poststart when it exits with status 0.',
      ),
      plan.notes.join('\n'),
    );
    assert.deepEqual(
      plan.warnings.filter((w) => w.includes('poststart')),
      [],
    );
  });

  it('node-poststart: with every manager, prestart runs through it, then bash runs the start script and poststart after a clean end', async () => {
    const byTool: Record<string, unknown> = {};
    for (const variant of [0, 1, 2, 3, 4]) {
      const plan = await examplePlan('node-poststart', variant);
      byTool[(await exampleEnv('node-poststart', variant)).CC_NODE_BUILD_TOOL!] = {
        beforeStart: plan.beforeStart.map((c) => c.argv),
        start: plan.start.argv,
      };
    }
    const start = (run: string, tool: string) => [
      'bash',
      '-c',
      `${PRELUDE}bash -c "$1" && exec ${run} poststart`,
      'start',
      'node server.js',
      'slipway-example-poststart',
      '1.0.0',
      agent(tool),
    ];
    assert.deepEqual(byTool, {
      npm: { beforeStart: [['npm', 'run', 'prestart']], start: start('npm run', 'npm/11.6.1') },
      pnpm: { beforeStart: [['pnpm', 'run', 'prestart']], start: start('pnpm run', 'pnpm/10.34.9') },
      yarn: { beforeStart: [['yarn', 'run', 'prestart']], start: start('yarn run', 'yarn/1.22.22') },
      bun: { beforeStart: [['bun', 'run', 'prestart']], start: start('bun run', 'bun/1.3.1') },
      // Plug'n'Play (no .yarnrc.yml): the start script runs node, so NODE_OPTIONS loads .pnp.cjs.
      'yarn-berry': {
        beforeStart: [['yarn', 'run', 'prestart']],
        start: [
          'bash',
          '-c',
          `${PRELUDE}${PNP}bash -c "$1" && exec yarn run poststart`,
          'start',
          'node server.js',
          'slipway-example-poststart',
          '1.0.0',
          agent('yarn/4.18.1'),
        ],
      },
    });
  });

  it('the build cache is keyed on the package manager, its exact version and the devDependencies choice', async () => {
    assert.deepEqual((await examplePlan('node-pnpm')).cacheKeyInputs, ['pnpm 10.34.9', 'without devDependencies']);
    assert.deepEqual((await examplePlan('node-yarn-berry')).cacheKeyInputs, ['yarn-berry 4.18.1', 'without devDependencies']);
    assert.deepEqual((await examplePlan('node-yarn1')).cacheKeyInputs, ['yarn1 1.22.22', 'with devDependencies']);
    assert.deepEqual((await examplePlan('node-bun')).cacheKeyInputs, ['bun 1.3.1', 'without devDependencies']);
    assert.deepEqual((await examplePlan('node-npm')).cacheKeyInputs, [`npm ${NPM_DEFAULT.version}`, 'with devDependencies']);
  });

  it('an install with nothing but the lockfile to write may be skipped; one with install scripts may not', async () => {
    const cached = await examplePlan('node-cached');
    assert.deepEqual(cached.build[0]!.skipWhenUnchanged?.settings, [
      'node 24.11.0',
      `npm ${NPM_DEFAULT.version}`,
      'yarn 1.22.22',
      'without devDependencies',
    ]);
    assert.ok(cached.build[0]!.skipWhenUnchanged?.files.includes('package-lock.json'));
    for (const name of ['node-npm', 'node-pnpm', 'node-yarn1', 'node-yarn-berry', 'node-custom']) {
      assert.equal(
        (await examplePlan(name)).build.some((command) => command.skipWhenUnchanged),
        false,
        name,
      );
    }
  });

  it('node-sigterm and node-https-redirect: the plain npm path', async () => {
    for (const name of ['node-sigterm', 'node-https-redirect']) {
      const plan = await examplePlan(name);
      assert.deepEqual(
        core(plan),
        {
          provider: 'node',
          toolchain: [NODE_DEFAULT, NPM_DEFAULT, SYSTEM_YARN],
          env: { npm_config_update_notifier: 'false' },
          files: [],
          build: [npmInstall(false)],
          beforeStart: [],
          start: directStart(name),
          cacheDirs: ['.slipway-cache/npm', 'node_modules'],
          cacheDirsInRelease: ['node_modules'],
          warnings: [],
        },
        name,
      );
    }
  });
});
