#!/usr/bin/env node
// The executable runs the compiled CLI; `./dev setup` (or `npm run build`) produces it. The build
// also bundles it into one file (scripts/bundle-cli.mjs), which starts in half the time; a
// bundle older than the compiled modules (tsc run alone since) is passed over for them.
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
const bundle = new URL('../dist/src/cli/main.bundle.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('slipway is not built yet: run `./dev setup` (or `npm run build`) in the slipway folder.\n');
  process.exit(1);
}
const bundled = statSync(fileURLToPath(bundle), { throwIfNoEntry: false });
const fresh = bundled !== undefined && bundled.mtimeMs >= statSync(fileURLToPath(entry)).mtimeMs;
const { main } = await import((fresh ? bundle : entry).href);
process.exitCode = await main(process.argv.slice(2));
