/**
 * Log drains through the real interfaces: a deployed app prints numbered lines, real receivers
 * on loopback (HTTP with NDJSON and Elasticsearch's `_bulk`, syslog over TCP and UDP) take
 * them. A receiver down for 20 s, a daemon restart and a full buffer lose nothing silently.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { Worker } from 'node:worker_threads';
import type { AddressInfo } from 'node:net';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutFixture, createApp, deploymentLog, getThroughRouter, pushAndWait, registerSshKey } from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';
import { launchBrowser, openConsolePage } from '../e2e/browser.js';

interface Received {
  stream: string;
  message: string;
  app: string;
  instance: string | null;
  [field: string]: unknown;
}

/** An HTTP receiver: NDJSON batches on any path, Elasticsearch bulk requests on `/es/_bulk`. */
class HttpReceiver {
  records: Received[] = [];
  bulk: Array<{ action: Record<string, { _index: string }>; doc: Received }> = [];
  authorizations = new Set<string>();
  port = 0;
  private server: Server | undefined;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        if (req.headers.authorization) this.authorizations.add(req.headers.authorization);
        const lines = body.split('\n').filter((l) => l !== '');
        if (req.url === '/es/_bulk') {
          for (let i = 0; i < lines.length; i += 2) this.bulk.push({ action: JSON.parse(lines[i]!), doc: JSON.parse(lines[i + 1]!) });
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ took: 1, errors: false, items: [] }));
          return;
        }
        assert.equal(req.headers['content-type'], 'application/x-ndjson');
        for (const line of lines) this.records.push(JSON.parse(line));
        res.end();
      });
    });
    const server = this.server;
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
  }

  /** Stops answering: connections are cut and new ones refused. */
  async stop(): Promise<void> {
    const server = this.server!;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Binds a UDP port on loopback, says its number, then sends each datagram's text. */
const UDP_RECEIVER = `
const { parentPort } = require('node:worker_threads');
const socket = require('node:dgram').createSocket({ type: 'udp4', recvBufferSize: 4 * 1024 * 1024 });
socket.on('message', (message) => parentPort.postMessage(message.toString('utf8')));
socket.bind(0, '127.0.0.1', () => parentPort.postMessage(socket.address().port));
`;

/** A syslog receiver: RFC 6587 octet-counted frames over TCP, and datagrams over UDP. */
class SyslogReceiver {
  tcpMessages: string[] = [];
  udpMessages: string[] = [];
  tcpPort = 0;
  udpPort = 0;
  private tcp: TcpServer | undefined;
  private udp: Worker | undefined;

  private sockets = new Set<import('node:net').Socket>();

  async start(): Promise<void> {
    await this.startTcp();
    // UDP keeps nothing a receiver does not read in time: the datagrams are read on a thread of
    // their own, so this file's own work (CLI calls, pushes) never holds up the reading.
    const udp = new Worker(UDP_RECEIVER, { eval: true });
    this.udp = udp;
    this.udpPort = await new Promise<number>((resolve, reject) => {
      udp.once('error', reject);
      udp.once('message', (port: number) => resolve(port));
    });
    udp.on('message', (message: string | number) => {
      if (typeof message === 'string') this.udpMessages.push(message);
    });
  }

  /** The TCP receiver stops: its connections are cut, new ones refused. */
  async stopTcp(): Promise<void> {
    const tcp = this.tcp!;
    this.tcp = undefined;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => tcp.close(() => resolve()));
  }

  async startTcp(): Promise<void> {
    this.tcp = createTcpServer((socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      let pending = Buffer.alloc(0);
      socket.on('data', (chunk) => {
        pending = Buffer.concat([pending, chunk]);
        for (;;) {
          const space = pending.indexOf(32);
          if (space < 0) break;
          const length = Number(pending.subarray(0, space).toString());
          assert.ok(Number.isInteger(length) && length > 0, `an octet count, not ${pending.subarray(0, space).toString()}`);
          if (pending.length < space + 1 + length) break;
          this.tcpMessages.push(pending.subarray(space + 1, space + 1 + length).toString('utf8'));
          pending = pending.subarray(space + 1 + length);
        }
      });
      socket.on('error', () => {});
    });
    const tcp = this.tcp;
    await new Promise<void>((resolve) => tcp.listen(this.tcpPort, '127.0.0.1', resolve));
    this.tcpPort = (tcp.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    await this.udp?.terminate();
    if (this.tcp) await this.stopTcp();
  }
}

interface DrainView {
  id: string;
  type: string;
  state: string;
  waiting: number;
  lag_seconds: number;
  dropped: number;
  enabled: boolean;
}

let daemon: TestDaemon;
let dir: string;
let appId: string;
const http = new HttpReceiver();
const syslog = new SyslogReceiver();
let httpDrain: string;

before(async () => {
  daemon = await startDaemon(['--drain-buffer-size', '1M']);
  await http.start();
  await syslog.start();
  const { gitEnv } = await registerSshKey(daemon);
  dir = checkoutFixture('drain-lines');
  appId = await createApp(daemon, dir, 'drain-lines');
  const deployed = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(deployed.state, 'OK', (await deploymentLog(daemon, appId, deployed.id)).join('\n'));
});

after(async () => {
  await daemon?.stop();
  await http.stop().catch(() => {});
  await syslog.stop();
});

async function cli(args: string[]): Promise<string> {
  const result = await daemon.cli(args, { cwd: dir });
  assert.equal(result.code, 0, `slipway ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

async function drains(): Promise<DrainView[]> {
  return JSON.parse(await cli(['drain', '--format', 'json'])) as DrainView[];
}

async function drainOf(id: string): Promise<DrainView> {
  const found = (await drains()).find((d) => d.id === id);
  assert.ok(found, `drain ${id} listed`);
  return found;
}

async function print(tag: string, n: number, ms = 0): Promise<void> {
  const answer = await getThroughRouter(daemon, `${appId}.localhost`, `/print?tag=${tag}&n=${n}&ms=${ms}`);
  assert.equal(answer.status, 200, answer.body);
}

/** The numbers of the lines `<tag> NNNNNN` among messages, as received. */
function numbersOf(messages: string[], tag: string): number[] {
  const pattern = new RegExp(`(?:^|\\] )${tag} (\\d{6})$`);
  return messages.flatMap((m) => {
    const match = pattern.exec(m);
    return match ? [Number(match[1])] : [];
  });
}

/** Each line's first arrival, in arrival order (delivery is at least once: a batch may come twice). */
function firstArrivals(numbers: number[]): number[] {
  const seen = new Set<number>();
  return numbers.filter((n) => !seen.has(n) && seen.add(n));
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Waits until every line 1..n of the tag arrived, then checks they came in order. */
async function allArrive(what: string, messages: () => string[], tag: string, n: number, timeoutMs = 60_000): Promise<void> {
  await waitUntil(
    `${what}: ${n} lines "${tag}"`,
    async () => (new Set(numbersOf(messages(), tag)).size >= n ? true : undefined),
    timeoutMs,
  );
  assert.deepEqual(firstArrivals(numbersOf(messages(), tag)), range(1, n), `${what}: every line, in order`);
}

const httpMessages = () => http.records.filter((r) => r.stream === 'out').map((r) => r.message);

test('drain URLs that are not http(s)/tcp/udp or point at slipway itself are refused with the reason', async () => {
  const refused = async (args: string[], reason: RegExp) => {
    const result = await daemon.cli(['drain', 'create', ...args], { cwd: dir });
    assert.notEqual(result.code, 0, `refused: ${args.join(' ')}`);
    assert.match(result.stderr, reason);
  };
  await refused(['HTTP', 'ftp://127.0.0.1/logs'], /starts with http:\/\/ or https:\/\//);
  await refused(['Kafka', 'http://127.0.0.1:9/'], /one of "?TCPSyslog"?, "?UDPSyslog"?, "?HTTP"?, "?ElasticSearch/);
  await refused(['HTTP', `${daemon.apiUrl}/v1/apps`], /slipway's own API/);
  await refused(['HTTP', `http://127.0.0.1:${daemon.routerPort}/`], /slipway's own router/);
  await refused(['TCPSyslog', `tcp://127.0.0.1:${daemon.sshPort}`], /slipway's own git server/);
  const sandbox = daemon.subnet.replace(/0\.0\/16$/, '0.9');
  await refused(['UDPSyslog', `udp://${sandbox}:514`], /sandboxes' subnet/);
  // Positive control: the same command with a receiver's address is accepted (and removed again).
  const id = (await cli(['drain', 'create', 'http', `http://127.0.0.1:${http.port}/probe`])).trim();
  assert.match(id, /^drain_/);
  await cli(['drain', 'remove', id]);
  assert.equal((await drains()).length, 0);
});

test('HTTP, Elasticsearch and syslog drains carry the app output in order, with its access log when asked', async () => {
  httpDrain = (
    await cli([
      'drain',
      'create',
      'HTTP',
      `http://127.0.0.1:${http.port}/in`,
      '--username',
      'shop',
      '--password',
      's3cret',
      '--with-access-logs',
    ])
  ).trim();
  const es = (await cli(['drain', 'create', 'ElasticSearch', `http://127.0.0.1:${http.port}/es`])).trim();
  const tcp = (await cli(['drain', 'create', 'TCPSyslog', `tcp://127.0.0.1:${syslog.tcpPort}`])).trim();
  const udp = (await cli(['drain', 'create', 'UDPSyslog', `udp://127.0.0.1:${syslog.udpPort}`])).trim();
  assert.equal((await drains()).length, 4);
  await print('a', 300);
  await allArrive('HTTP', httpMessages, 'a', 300);
  await allArrive('Elasticsearch', () => http.bulk.map((b) => b.doc.message as string), 'a', 300);
  await allArrive('TCP syslog', () => syslog.tcpMessages, 'a', 300);
  await waitUntil('UDP syslog lines', async () => (numbersOf(syslog.udpMessages, 'a').length >= 300 ? true : undefined));

  assert.deepEqual([...http.authorizations], [`Basic ${Buffer.from('shop:s3cret').toString('base64')}`]);
  const line = http.records.find((r) => r.message === 'a 000001')!;
  assert.equal(line.app, 'drain-lines');
  assert.match(String(line.instance), /^instance_/);
  assert.match(http.bulk[0]!.action.index!._index, /^slipway-drain-lines-\d{4}\.\d{2}\.\d{2}$/);
  // RFC 5424 with the app and the instance in the structured data, framed by octet counts (checked as read).
  const message = syslog.tcpMessages.find((m) => m.endsWith('] a 000001'))!;
  assert.match(
    message,
    /^<14>1 \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \S+ drain-lines instance_\S+ out \[slipway@32473 app="drain-lines" app_id="app_[0-9a-f-]+" instance="instance_[^"]+" stream="out"\] a 000001$/,
  );
  assert.ok(syslog.udpMessages.some((m) => m.startsWith('<14>1 ') && m.endsWith('] a 000300')));

  // The request that printed the lines reached the access log, and so the drain that asked for it.
  const access = await waitUntil('an access record', async () =>
    http.records.find((r) => r.stream === 'access' && r.path === '/print?tag=a&n=300&ms=0'),
  );
  assert.equal(access.status, 200);
  assert.equal(
    http.bulk.some((b) => b.doc.stream === 'access'),
    false,
    'the Elasticsearch drain did not ask for access records',
  );

  // A one-off run's output reaches the app's log, and so the drains.
  await cli(['run', '--', 'node', '-e', "for (let i = 1; i <= 3; i++) console.log('r ' + String(i).padStart(6, '0'))"]);
  await allArrive('HTTP, a one-off run', httpMessages, 'r', 3);
  assert.ok(httpMessages().includes('[run] r 000001'));
  await allArrive('TCP syslog, a one-off run', () => syslog.tcpMessages, 'r', 3);

  // A TCP syslog receiver that stops and comes back: what went out as it stopped is sent again.
  await syslog.stopTcp();
  await print('s', 200, 1_000);
  await waitUntil('the TCP drain failing', async () => ((await drainOf(tcp)).state === 'failing' ? true : undefined));
  await syslog.startTcp();
  await allArrive('TCP syslog after its receiver came back', () => syslog.tcpMessages, 's', 200);

  for (const id of [es, tcp, udp]) await cli(['drain', 'remove', id]);
  assert.deepEqual(
    (await drains()).map((d) => d.id),
    [httpDrain],
  );
});

test('a disabled drain keeps its lines and sends them once enabled', async () => {
  await cli(['drain', 'disable', httpDrain]);
  await print('b', 20);
  const held = await waitUntil('lines held by the disabled drain', async () => {
    const d = await drainOf(httpDrain);
    return d.state === 'disabled' && d.waiting >= 20 ? d : undefined;
  });
  assert.equal(held.enabled, false);
  assert.equal(numbersOf(httpMessages(), 'b').length, 0);
  await cli(['drain', 'enable', httpDrain]);
  await allArrive('HTTP after enable', httpMessages, 'b', 20);
});

async function metric(name: string): Promise<number | undefined> {
  const response = await fetch(`${daemon.apiUrl}/metrics`, { headers: { authorization: `Bearer ${daemon.adminToken}` } });
  const text = await response.text();
  const match = new RegExp(`^${name}\\{app="${appId}",drain="${httpDrain}"\\} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : undefined;
}

test('a receiver down for 20 s loses nothing: every line arrives, in order, once it is back', async () => {
  await http.stop();
  const stoppedAt = Date.now();
  await print('c', 400, 10_000);
  const failing = await waitUntil('the drain failing with lines waiting', async () => {
    const d = await drainOf(httpDrain);
    return d.state === 'failing' && d.waiting > 0 ? d : undefined;
  });
  assert.ok(failing.lag_seconds >= 0);
  const human = await cli(['drain']);
  assert.match(human, new RegExp(`${httpDrain}  HTTP .* failing  lag \\S+  waiting \\d+  dropped 0`));
  await waitUntil('the lag in /metrics', async () => ((await metric('slipway_drain_lag_seconds')) ?? 0) >= 1 || undefined);
  assert.ok(((await metric('slipway_drain_waiting_lines')) ?? 0) > 0);
  // The receiver stays down for 20 s: the outage itself, not a wait for a result.
  await new Promise((r) => setTimeout(r, Math.max(0, 20_000 - (Date.now() - stoppedAt))));
  await http.start();
  await allArrive('HTTP after the outage', httpMessages, 'c', 400);
  await waitUntil('nothing waiting', async () => ((await drainOf(httpDrain)).waiting === 0 ? true : undefined));
  assert.equal(await metric('slipway_drain_waiting_lines'), 0);
  assert.equal((await drainOf(httpDrain)).dropped, 0);
});

test('lines waiting for a receiver survive a daemon restart', async () => {
  await http.stop();
  await print('d', 150);
  await waitUntil('lines waiting before the restart', async () => ((await drainOf(httpDrain)).waiting >= 150 ? true : undefined));
  await daemon.terminate();
  await http.start();
  await daemon.restart();
  await allArrive('HTTP after the restart', httpMessages, 'd', 150);
});

test('a full buffer drops the oldest lines, counts them and says so', async () => {
  // Whoever listens to the app's events hears of it: a webhook for drain.dropping.
  const hooks: Array<{ event: string; details: Record<string, unknown>; summary: string }> = [];
  const hookServer = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      hooks.push(JSON.parse(body));
      res.end();
    });
  });
  await new Promise<void>((resolve) => hookServer.listen(0, '127.0.0.1', resolve));
  const hookUrl = `http://127.0.0.1:${(hookServer.address() as AddressInfo).port}/hook`;
  await cli(['webhooks', 'add', 'drains', hookUrl, '--event', 'drain.dropping']);
  await http.stop();
  const total = 20_000;
  await print('e', total, 2_000);
  // 1 MiB holds some thousands of these lines: the rest, the oldest, are dropped and counted.
  // The count is read once it stopped moving for a second: the drain carries the app's other
  // lines too (its access log), so the sum can pass the total while the app still prints.
  let seen = { dropped: -1, since: 0 };
  const full = await waitUntil(
    'every line kept or counted as dropped, the count settled',
    async () => {
      const d = await drainOf(httpDrain);
      if (d.dropped !== seen.dropped) seen = { dropped: d.dropped, since: Date.now() };
      return d.dropped > 0 && d.waiting + d.dropped >= total && Date.now() - seen.since >= 1000 ? d : undefined;
    },
    90_000,
  );
  assert.match(await cli(['drain']), new RegExp(`dropped ${full.dropped}`));
  assert.match(daemon.output(), /The drain drain_\S+ of drain-lines dropped \d+ lines/);
  const told = await waitUntil('the drain.dropping webhook', async () => hooks.find((h) => h.event === 'drain.dropping'), 30_000);
  assert.equal(told.details.drain_id, httpDrain);
  assert.match(told.summary, /HTTP drain .* of drain-lines is dropping lines/);
  hookServer.close();
  await cli(['webhooks', 'remove', 'drains']);
  await http.start();
  await waitUntil('the buffer emptied', async () => ((await drainOf(httpDrain)).waiting === 0 ? true : undefined), 90_000);
  const arrived = firstArrivals(numbersOf(httpMessages(), 'e'));
  assert.ok(arrived.length > 0 && arrived.length < total, `some lines kept, some dropped (${arrived.length} of ${total} arrived)`);
  // What arrived is the newest lines, in order, without a gap: the oldest were the ones dropped.
  assert.deepEqual(arrived, range(total - arrived.length + 1, total));
  // Every missing line is counted. The drain also carries the access log and the platform's
  // lines about the app, a few of which may be among those dropped too.
  const missing = total - arrived.length;
  assert.ok(full.dropped >= missing && full.dropped - missing <= 5, `${full.dropped} counted for ${missing} lines missing`);
});

test("the app's page shows its drains: state, lag, lines waiting and dropped, and a chart of the lines waiting", async () => {
  const { dropped } = await drainOf(httpDrain);
  const browser = await launchBrowser();
  const page = browser.page;
  page.setDefaultTimeout(30_000);
  try {
    await openConsolePage(page, `${daemon.apiUrl}/`);
    await page.getByLabel('API token').fill(daemon.adminToken);
    await page.keyboard.press('Enter');
    await page.getByText('Signed in as admin').waitFor();
    await openConsolePage(page, `${daemon.apiUrl}/#/apps/${appId}`);
    const card = page.locator(`figure[data-drain="${httpDrain}"]`);
    await card.locator('[data-state="ok"]').waitFor();
    assert.match(await card.innerText(), new RegExp(`HTTP http://127\\.0\\.0\\.1:${http.port}/in \\+ access log`));
    assert.match(await card.innerText(), new RegExp(`Lag none · 0 waiting · ${dropped} dropped`));
    assert.equal(await card.locator('rect').count(), 0, 'nothing waiting: no bar');
    // Lines held by a disabled drain appear as bars on the next refresh, without reloading the page.
    await cli(['drain', 'disable', httpDrain]);
    await print('f', 50);
    await card.locator('[data-state="disabled"]').waitFor();
    await page.waitForFunction(
      (id) => (document.querySelector(`figure[data-drain="${id}"] svg`)?.querySelectorAll('rect').length ?? 0) > 0,
      httpDrain,
    );
    assert.match((await card.locator('svg').getAttribute('aria-label')) ?? '', /^Lines waiting over the last minutes: \d+ now/);
    // A disabled drain's lag is the age of its oldest line waiting.
    await page.waitForFunction(
      (id) => /Lag [1-9]\d* s · \d+ waiting/.test(document.querySelector(`figure[data-drain="${id}"]`)?.textContent ?? ''),
      httpDrain,
    );
    await browser.screenshot('app-drains');
    await cli(['drain', 'enable', httpDrain]);
    await allArrive('HTTP after the page', httpMessages, 'f', 50);
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${browser.diagnostics.join('\n')}`);
  } finally {
    await browser.close();
  }
});
