import { test } from 'node:test';
import assert from 'node:assert/strict';
import { receiverUrlFor, receiverUserFor, redactedUrl } from './receiver-urls.js';

test('every part of a URL that may carry a secret is hidden, where it goes is kept', () => {
  assert.equal(redactedUrl('https://hooks.slack.com/services/T0/B0/XXXXSECRET'), 'https://hooks.slack.com/***');
  assert.equal(redactedUrl('https://user:pa55@logs.example.com:8443/in?token=abc#frag'), 'https://***@logs.example.com:8443/***?***#***');
  assert.equal(redactedUrl('https://apikey@logs.example.com/'), 'https://***@logs.example.com/');
  assert.equal(redactedUrl('tcp://logs.example.com:6514'), 'tcp://logs.example.com:6514');
  assert.equal(redactedUrl('udp://[2001:db8::1]:514/x'), 'udp://[2001:db8::1]:514/***');
  assert.equal(redactedUrl('not a url'), '(invalid URL)');
});

test('a full token sees the URL and user as shown to it; read and deploy tokens see them redacted', () => {
  const url = 'https://ci:***@example.com/hook/s3cret?sig=1';
  assert.equal(receiverUrlFor('full', url), url);
  for (const scope of ['read', 'deploy'] as const) {
    const shown = receiverUrlFor(scope, url);
    assert.equal(shown, 'https://***@example.com/***?***');
    assert.doesNotMatch(shown, /s3cret|sig|ci/);
    assert.equal(receiverUserFor(scope, 'elastic'), '***');
    assert.equal(receiverUserFor(scope, null), null);
  }
  assert.equal(receiverUserFor('full', 'elastic'), 'elastic');
});
