import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gitignoreCoversNodeModules, hygieneWarnings } from './hygiene.js';
import { parseMiseTools } from './mise.js';

describe('repository hygiene', () => {
  it('recognises the usual ways to ignore node_modules', () => {
    for (const line of ['/node_modules', 'node_modules', 'node_modules/', '/node_modules/', '**/node_modules', 'node_modules/**']) {
      assert.equal(gitignoreCoversNodeModules(`dist\n${line}\n`), true, line);
    }
    assert.equal(gitignoreCoversNodeModules('dist\n# node_modules\n'), false);
    assert.equal(gitignoreCoversNodeModules('/node_modules\n!node_modules\n'), false);
    assert.equal(gitignoreCoversNodeModules('/src/node_modules_backup\n'), false);
  });

  it('warns about committed node_modules and a missing or incomplete .gitignore', () => {
    assert.deepEqual(hygieneWarnings({ gitignore: '/node_modules\n', nodeModulesCommitted: false }), []);
    const all = hygieneWarnings({ gitignore: undefined, nodeModulesCommitted: true });
    assert.match(all[0] ?? '', /node_modules is committed.*git rm -r --cached node_modules/);
    assert.match(all[1] ?? '', /There is no \.gitignore: create one with the line \/node_modules/);
    assert.match(
      hygieneWarnings({ gitignore: 'dist\n', nodeModulesCommitted: false })[0] ?? '',
      /^\.gitignore does not mention \/node_modules: add the line \/node_modules/,
    );
  });
});

describe('mise.toml', () => {
  it('reads deno, node and bun and warns about the rest', () => {
    const tools = parseMiseTools('[tools]\ndeno = "latest"\nnode = "22"\nbun = { version = "1.3" }\npython = "3.12"\n');
    assert.deepEqual(tools, {
      deno: 'latest',
      node: '22',
      bun: '1.3',
      warnings: [
        'mise.toml declares python: slipway installs only deno, node, bun from mise.toml; the others are ignored. Remove them from [tools] or install them as npm dependencies.',
      ],
    });
  });

  it('a list takes its first version; a missing version is an error', () => {
    assert.equal(parseMiseTools('[tools]\ndeno = ["2.1.4", "1.46"]\n').deno, '2.1.4');
    assert.throws(() => parseMiseTools('[tools]\ndeno = {}\n'), /tools\.deno has no version/);
  });
});
