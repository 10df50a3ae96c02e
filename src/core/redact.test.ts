import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeRedactor, secretValues } from './redact.js';

test('tokens, passwords, basic auth (plain and base64) and URL passwords are hidden', () => {
  const env = {
    NPM_TOKEN: 'npm_abcdef123456',
    CC_NPM_BASIC_AUTH: 'alice:s3cret-pass',
    POSTGRESQL_ADDON_URI: 'postgresql://u:pgpassword99@10.0.0.1:5432/db',
    GREETING: 'hello',
  };
  const redact = makeRedactor(secretValues(env));
  assert.equal(redact('token npm_abcdef123456 used'), 'token [redacted] used');
  assert.equal(redact(`auth=${Buffer.from('alice:s3cret-pass').toString('base64')}`), 'auth=[redacted]');
  assert.equal(redact('connecting with pgpassword99'), 'connecting with [redacted]');
  assert.equal(redact('hello world'), 'hello world', 'ordinary values stay readable');
});

test('multi-line private keys are hidden line by line', () => {
  const key = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----';
  const redact = makeRedactor(secretValues({ CC_SSH_PRIVATE_KEY: key }));
  assert.equal(redact('b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ'), '[redacted]');
});

test('the password of CC_NPM_BASIC_AUTH is hidden alone too, and keys pasted with literal \\n are hidden line by line', () => {
  const redact = makeRedactor(
    secretValues({
      CC_NPM_BASIC_AUTH: 'deployer:s3cret-pass',
      CC_SSH_PRIVATE_KEY:
        '-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\\n-----END OPENSSH PRIVATE KEY-----',
    }),
  );
  assert.equal(redact('password s3cret-pass refused'), 'password [redacted] refused');
  assert.equal(redact('line b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ'), 'line [redacted]');
});
