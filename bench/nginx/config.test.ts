import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nginxRunArgv, nginxTestArgv } from './commands.js';
import { renderNginxConfig, validateWorkDir, type NginxConfigInput } from './config.js';
import { nginxQuoted, noInstancePage } from '../../src/router/pages.js';
import { validateCidr, validateHostName, validateIPv4, validatePort, validateTable } from '../../src/router/validate.js';

const route = (upstreams: { address: string; port: number }[]) => ({ appId: 'app_test', upstreams, forceHttps: false });

function input(overrides: Partial<NginxConfigInput> = {}): NginxConfigInput {
  return {
    workDir: '/var/lib/slipway/router',
    listenHost: '0.0.0.0',
    port: 8000,
    generation: 7,
    drainTimeoutSeconds: 60,
    routes: validateTable(
      new Map([
        [
          'App-1.Example.com',
          route([
            { address: '10.200.0.2', port: 8080 },
            { address: '10.200.0.3', port: 8080 },
          ]),
        ],
        ['idle.example.com', route([])],
      ]),
    ),
    ...overrides,
  };
}

test('a host with upstreams gets an upstream block with a keep-alive pool and a proxying server', () => {
  const text = renderNginxConfig(input());
  assert.match(
    text,
    /upstream slipway_app_0 \{\n    least_conn;\n    server 10\.200\.0\.2:8080 [^\n]*;\n    server 10\.200\.0\.3:8080 [^\n]*;\n    keepalive 32;/,
  );
  assert.match(
    text,
    /server_name app-1\.example\.com;\n    location \/ \{\n      proxy_pass http:\/\/slipway_app_0;\n      proxy_http_version 1\.1;/,
  );
  assert.match(text, /proxy_set_header Connection \$slipway_connection;/);
  assert.match(text, /map \$http_upgrade \$slipway_connection \{\n    default upgrade;\n    '' '';\n  \}/);
  for (const header of [
    'X-Forwarded-For $proxy_add_x_forwarded_for',
    'X-Forwarded-Proto $scheme',
    'X-Forwarded-Host $host',
    'X-Forwarded-Port $server_port',
  ]) {
    assert.ok(text.includes(`proxy_set_header ${header};`), header);
  }
});

test('an empty upstream list renders a 503 page naming the host; unknown hosts fall to a 404 default server', () => {
  const text = renderNginxConfig(input());
  assert.match(
    text,
    /server_name idle\.example\.com;\n    location \/ \{\n[^}]*return 503 "[^"]*idle\.example\.com<\/strong> has no running instance/,
  );
  assert.match(text, /listen 0\.0\.0\.0:8000 default_server backlog=4096;\n    server_name _;\n    location \/ \{\n      return 404 "/);
  assert.equal((text.match(/upstream slipway_app_/g) ?? []).length, 1, 'no upstream block for the idle host');
});

test('process, paths and limits live in the work directory', () => {
  const text = renderNginxConfig(input({ workerUser: 'www-data' }));
  for (const line of [
    'user www-data;',
    'worker_processes auto;',
    'daemon off;',
    'pid /var/lib/slipway/router/nginx.pid;',
    'error_log /var/lib/slipway/router/logs/error.log warn;',
    'worker_shutdown_timeout 60s;',
    'client_body_temp_path /var/lib/slipway/router/tmp/body;',
    'proxy_temp_path /var/lib/slipway/router/tmp/proxy;',
    'client_max_body_size 100m;',
    'proxy_read_timeout 3600s;',
    'listen unix:/var/lib/slipway/router/control.sock;',
    'return 200 "7";',
  ]) {
    assert.ok(text.includes(line), line);
  }
  assert.ok(!renderNginxConfig(input()).includes('\nuser '), 'no user directive unless running as root');
});

test('the same table renders the same text whatever the insertion order', () => {
  const one = validateTable(
    new Map([
      ['b.test', route([])],
      ['a.test', route([{ address: '10.0.0.1', port: 1 }])],
    ]),
  );
  const two = validateTable(
    new Map([
      ['a.test', route([{ address: '10.0.0.1', port: 1 }])],
      ['b.test', route([])],
    ]),
  );
  assert.equal(renderNginxConfig(input({ routes: one })), renderNginxConfig(input({ routes: two })));
});

test('host names: DNS names (plus the underscore of app ids), lower-cased', () => {
  assert.equal(validateHostName('App-1.Example.COM'), 'app-1.example.com');
  assert.equal(
    validateHostName('app_0b5d2c1e-8a8f-4f3a-9d0e-1b2c3d4e5f60.localhost'),
    'app_0b5d2c1e-8a8f-4f3a-9d0e-1b2c3d4e5f60.localhost',
  );
  assert.equal(validateHostName('localhost'), 'localhost');
  assert.equal(validateHostName('app-4b1d.localhost'), 'app-4b1d.localhost');
  for (const bad of ['a;b', 'a b', 'a\nb', '*.a', 'a.', '.a', 'a..b', 'a:80', 'a/b', 'a{b', 'a$b', '~a', '_', '_a', 'a_', '', 5]) {
    assert.throws(() => validateHostName(bad), /Router host/, JSON.stringify(bad));
  }
});

test('addresses and ports: canonical IPv4 and integer ports only', () => {
  assert.equal(validateIPv4('10.200.0.2'), '10.200.0.2');
  assert.equal(validatePort(8080), 8080);
  for (const bad of ['10.0.0', '10.0.0.1.2', '256.0.0.1', '010.0.0.1', '10.0.0.1 ', '::1', 'a.b.c.d', null]) {
    assert.throws(() => validateIPv4(bad), /IPv4/, JSON.stringify(bad));
  }
  for (const bad of [0, -1, 65536, 1.5, '80', NaN]) assert.throws(() => validatePort(bad), /TCP port/, String(bad));
});

test('duplicate upstreams collapse to one server line', () => {
  const [validated] = validateTable(
    new Map([
      [
        'a.test',
        route([
          { address: '10.0.0.1', port: 80 },
          { address: '10.0.0.1', port: 80 },
        ]),
      ],
    ]),
  );
  assert.equal(validated!.upstreams.length, 1);
});

test('wildcard hosts lead with one *. above a registrable name; routes need an app id and forceHttps', () => {
  assert.equal(validateHostName('*.Example.com', { wildcard: true }), '*.example.com');
  for (const bad of ['*.com', 'a.*.com', '**.example.com', '*example.com', '*']) {
    assert.throws(() => validateHostName(bad, { wildcard: true }), /Router host/, bad);
  }
  assert.throws(() => validateHostName('*.example.com'), /Router host/, 'no wildcard unless allowed');
  const [wild] = validateTable(new Map([['*.Example.com', { appId: 'app_1', upstreams: [], forceHttps: true }]]));
  assert.deepEqual(wild, { host: '*.example.com', appId: 'app_1', upstreams: [], forceHttps: true });
  assert.throws(() => validateTable(new Map([['a.test', { appId: 'app 1', upstreams: [], forceHttps: false }]])), /app id/);
  assert.throws(() => validateTable(new Map([['a.test', { appId: 'app_1', upstreams: [] } as never]])), /forceHttps/);
  assert.match(
    renderNginxConfig(input({ routes: [wild!] })),
    /server_name \*\.example\.com;\n    return 301 https:\/\/\$host\$request_uri;/,
  );
});

test('trusted proxies: canonical IPv4 CIDRs, a bare address is a /32', () => {
  assert.equal(validateCidr('10.0.0.0/8'), '10.0.0.0/8');
  assert.equal(validateCidr('192.0.2.7'), '192.0.2.7/32');
  for (const bad of ['10.0.0.0/33', '10.0.0.0/', '10.0.0.0/8/1', '::1/128', '10.0.0.0/8 ', 'x', 5]) {
    assert.throws(() => validateCidr(bad), /CIDR|IPv4/, String(bad));
  }
});

test('work directories that would need quoting in nginx syntax are refused', () => {
  for (const bad of ['relative/dir', '/tmp/with space', '/tmp/semi;colon', '/tmp/$var', '/tmp/../etc', '/' + 'x'.repeat(120)]) {
    assert.throws(() => validateWorkDir(bad), /Router work directory/, bad);
  }
  assert.throws(() => renderNginxConfig(input({ listenHost: '0.0.0.0; evil' })), /listen address/);
});

test('page text is quoted for nginx and may never carry a variable', () => {
  assert.equal(nginxQuoted('say "hi" \\ bye'), '"say \\"hi\\" \\\\ bye"');
  assert.throws(() => nginxQuoted('costs $5'), /would expand as a variable/);
  assert.ok(!noInstancePage('a.test').includes('$'));
  assert.ok(!noInstancePage('a.test').includes('"'));
});

test('nginx command lines are argv arrays with the work directory as prefix', () => {
  const command = { nginxBinary: '/usr/sbin/nginx', workDir: '/w', configPath: '/w/nginx.conf' };
  assert.deepEqual(nginxRunArgv(command), ['/usr/sbin/nginx', '-p', '/w/', '-c', '/w/nginx.conf']);
  assert.deepEqual(nginxTestArgv({ ...command, configPath: '/w/nginx.conf.next' }), [
    '/usr/sbin/nginx',
    '-t',
    '-q',
    '-p',
    '/w/',
    '-c',
    '/w/nginx.conf.next',
  ]);
});
