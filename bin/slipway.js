#!/usr/bin/env node
// The executable runs the compiled CLI; `./dev setup` (or `npm run build`) produces it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('slipway is not built yet: run `./dev setup` (or `npm run build`) in the slipway folder.\n');
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
