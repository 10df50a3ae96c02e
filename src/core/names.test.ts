import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkAppType, checkRegion, checkEnvName, checkEnvValue, checkDisplayName, checkRelativePath, isAppId } from './names.js';
import { ValidationError } from './errors.js';

test('application types and regions are the documented ones only', () => {
  const types = [
    { name: 'node', label: 'Node.js or Bun' },
    { name: 'sbt', label: 'Scala' },
  ];
  assert.equal(checkAppType('node', types), 'node');
  assert.equal(checkAppType('sbt', types), 'sbt');
  assert.throws(
    () => checkAppType('java', types),
    (e: ValidationError) => e.hint === 'Valid types: node (Node.js or Bun), sbt (Scala).',
  );
  assert.throws(() => checkAppType(7, types), /Unknown application type 7/);
  assert.equal(checkRegion('par'), 'par');
  assert.equal(checkRegion('mtl'), 'mtl');
  assert.throws(() => checkRegion('PAR'), /Unknown region "PAR"/);
});

test('variable names: letters, digits not first, underscore; sbt apps add - and .', () => {
  for (const good of ['A', '_X', 'NODE_ENV', 'CC_HEALTH_CHECK_PATH_0', 'lower_case1']) assert.equal(checkEnvName(good, 'node'), good);
  for (const bad of ['', '1A', 'A-B', 'a.b', 'A B', 'A=B', 'É', '$(x)'])
    assert.throws(() => checkEnvName(bad, 'node'), ValidationError, bad);
  assert.equal(checkEnvName('http.port-x', 'sbt'), 'http.port-x');
  assert.throws(() => checkEnvName('-x', 'sbt'), ValidationError);
  assert.throws(() => checkEnvName('9a', 'sbt'), ValidationError);
});

test('variable values may be multi-line but never hold NUL', () => {
  assert.equal(checkEnvValue('A', 'one\ntwo'), 'one\ntwo');
  assert.throws(() => checkEnvValue('A', 'a\0b'), /NUL/);
  assert.throws(() => checkEnvValue('A', 5), /must be a string/);
});

test('display names refuse control characters, path separators and shell syntax', () => {
  assert.equal(checkDisplayName('application', 'My shop 2'), 'My shop 2');
  for (const bad of ['', ' lead', '../etc', 'a/b', 'x;rm -rf', 'tab\there', 'new\nline', 'a'.repeat(64)]) {
    assert.throws(() => checkDisplayName('application', bad), ValidationError, JSON.stringify(bad));
  }
});

test('relative paths inside the build folder only', () => {
  assert.equal(checkRelativePath('CC_SBT_TARGET_DIR', 'web'), 'web');
  assert.equal(checkRelativePath('CC_SBT_TARGET_DIR', './modules/web/'), 'modules/web');
  for (const bad of ['/etc', '../x', 'a/../../b', 'a\nb'])
    assert.throws(() => checkRelativePath('CC_SBT_TARGET_DIR', bad), ValidationError, bad);
});

test('app ids have the app_<uuid> form', () => {
  assert.ok(isAppId('app_0b5d2c1e-8a8f-4f3a-9d0e-1b2c3d4e5f60'));
  assert.ok(!isAppId('app_../../etc'));
  assert.ok(!isAppId('org_0b5d2c1e-8a8f-4f3a-9d0e-1b2c3d4e5f60'));
});
