// A Redis add-on server's configuration, its users' rules and its ports, checked as text; the
// servers themselves are started in ../redis.test.ts (root only, outside the unit suite).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runsPlan } from './redis-provider.js';
import { candidatePorts } from './port-allocation.js';
import { defaultUserRules, quoteConfigValue, redisConf } from './redis-config.js';

describe('redis config and ports (pure)', () => {
  test('config values are quoted and control characters refused', () => {
    assert.equal(quoteConfigValue('a "b" \\c'), '"a \\"b\\" \\\\c"');
    assert.throws(() => quoteConfigValue('x\nbind 0.0.0.0'), /control characters/);
    const conf = redisConf({ bind: ['127.0.0.1', '10.77.0.1'], port: 6401, password: 'abc', dir: '/d/redis/x' });
    assert.match(conf, /^bind 127\.0\.0\.1 10\.77\.0\.1$/m);
    assert.match(conf, /^user default on #ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad ~\* &\* \+@all -@scripting /m);
    assert.ok(!conf.includes('abc'), 'the password itself is not in the file');
    assert.doesNotMatch(conf, /requirepass/);
    assert.match(conf, /^appendonly yes$/m);
    assert.match(conf, /^enable-protected-configs no$/m);
    assert.match(conf, /^sanitize-dump-payload yes$/m);
  });

  test("apps' rules: Lua off unless the plan says so, and nothing that would undo the rules or the settings", () => {
    const off = defaultUserRules('abc');
    assert.deepEqual(off, [
      'on',
      '#ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
      '~*',
      '&*',
      '+@all',
      '-@scripting',
      '-config|set',
      '-config|rewrite',
      '-acl|setuser',
      '-acl|deluser',
      '-acl|load',
      '-acl|save',
    ]);
    assert.deepEqual(
      defaultUserRules('abc', true),
      off.filter((rule) => rule !== '-@scripting'),
    );
    assert.match(
      redisConf({ bind: ['127.0.0.1'], port: 1, password: 'p', dir: '/d', scripting: true }),
      /^user default on #\S+ ~\* &\* \+@all -config\|set /m,
    );
    assert.throws(() => defaultUserRules(''), /needs a password/);
  });

  test('whether an adopted server runs the plan: its settings and whether Lua is allowed', () => {
    const wanted: Array<[string, string]> = [
      ['sanitize-dump-payload', 'yes'],
      ['maxmemory', '100'],
    ];
    const running = ['maxmemory', '100', 'sanitize-dump-payload', 'yes'];
    const refused = "This user has no permissions to run the 'eval' command";
    assert.equal(runsPlan(wanted, running, refused, false), true);
    assert.equal(runsPlan(wanted, running, 'OK', false), false, 'Lua allowed, the plan says off');
    assert.equal(runsPlan(wanted, running, refused, true), false, 'Lua refused, the plan says on');
    assert.equal(runsPlan(wanted, ['maxmemory', '0', 'sanitize-dump-payload', 'yes'], refused, false), false);
  });

  test('candidate ports skip those already given out', () => {
    assert.deepEqual(candidatePorts([7000, 7003], new Set([7001])), [7000, 7002, 7003]);
    assert.throws(() => candidatePorts([80, 90], new Set()), /invalid/);
    assert.throws(() => candidatePorts([7003, 7000], new Set()), /invalid/);
  });
});
