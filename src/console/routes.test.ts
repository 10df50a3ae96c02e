import { test } from 'node:test';
import assert from 'node:assert/strict';
import { href, parseRoute, type Route } from './browser/routes.js';

const app = 'app_12345678-1234-1234-1234-123456789abc';
const org = 'org_12345678-1234-1234-1234-123456789abc';

test('every page round-trips through its URL fragment', () => {
  const routes: Route[] = [
    { page: 'home' },
    { page: 'create-app', org },
    { page: 'create-app' },
    { page: 'app-info', app },
    { page: 'app-env', app },
    { page: 'app-services', app },
    { page: 'app-domains', app },
    { page: 'app-scaling', app },
    { page: 'app-logs', app },
    { page: 'addons', org },
    { page: 'addon-create', org },
  ];
  for (const route of routes)
    assert.deepEqual(parseRoute(href(route)), route.page === 'create-app' && !route.org ? { page: 'create-app', org: undefined } : route);
});

test('an empty fragment is the home page and anything else is not found', () => {
  assert.deepEqual(parseRoute(''), { page: 'home' });
  assert.deepEqual(parseRoute('#/'), { page: 'home' });
  assert.deepEqual(parseRoute('#/apps/x/history'), { page: 'not-found', path: '/apps/x/history' });
  assert.deepEqual(parseRoute('#/apps/x/logs/more'), { page: 'not-found', path: '/apps/x/logs/more' });
  assert.deepEqual(parseRoute('#/orgs'), { page: 'not-found', path: '/orgs' });
});
