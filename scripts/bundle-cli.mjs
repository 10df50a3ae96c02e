// Bundles the compiled CLI (dist/src/cli/main.js and the 170-odd modules it loads) into one
// file beside it, dist/src/cli/main.bundle.js, which bin/slipway.js runs: Node loads one file
// instead of resolving and evaluating each module, which halves a command's start-up time (the
// test suite runs the CLI thousands of times; a person pays it on every command). Packages stay
// imports of node_modules; the daemon, which `slipway server` loads when it starts, stays the
// compiled modules (its files are found relative to its own), loaded from the bundle's folder,
// and so do the CLI's error classes, which the daemon's start throws and the CLI tells apart
// (one module, so one class for both).
// Run after tsc, by `npm run build`, the set-up's build and the test runner's.
import { build } from 'esbuild';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../dist/src/cli/', import.meta.url));

await build({
  entryPoints: [`${cli}main.js`],
  outfile: `${cli}main.bundle.js`,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
  plugins: [
    {
      name: 'daemon-stays-outside',
      setup(on) {
        // src/cli/commands/server.ts imports ../../daemon/serve.js; from the bundle's folder that is ../daemon/serve.js.
        on.onResolve({ filter: /\/daemon\/serve\.js$/ }, () => ({ path: '../daemon/serve.js', external: true }));
        on.onResolve({ filter: /errors\.js$/ }, (args) =>
          resolve(args.resolveDir, args.path) === `${cli}errors.js` ? { path: './errors.js', external: true } : undefined,
        );
      },
    },
  ],
});
