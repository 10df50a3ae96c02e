// Example app for slipway's deploy tests. RELEASE (a file in the repo) tells releases apart.
const http = require('node:http');
const fs = require('node:fs');

const release = fs.existsSync('RELEASE') ? fs.readFileSync('RELEASE', 'utf8').trim() : 'none';
const slowMs = Number(process.env.SLOW_START_MS || 0);

function facts(req) {
  return {
    release,
    greeting: process.env.GREETING ?? null,
    appId: process.env.APP_ID ?? null,
    commitId: process.env.COMMIT_ID ?? null,
    deploymentId: process.env.CC_DEPLOYMENT_ID ?? null,
    instanceType: process.env.INSTANCE_TYPE ?? null,
    instanceId: process.env.INSTANCE_ID ?? null,
    instanceNumber: process.env.INSTANCE_NUMBER ?? null,
    port: process.env.PORT ?? null,
    uid: process.getuid(),
    forwardedFor: req.headers['x-forwarded-for'] ?? null,
    forwardedProto: req.headers['x-forwarded-proto'] ?? null,
    forwardedHost: req.headers['x-forwarded-host'] ?? null,
    reverseProxyIps: process.env.CC_REVERSE_PROXY_IPS ?? null,
  };
}

const server = http.createServer((req, res) => {
  if (req.url === '/crash') {
    console.error('crashing on purpose');
    res.end('bye');
    setTimeout(() => process.exit(3), 10);
    return;
  }
  if (req.url === '/log-colours') {
    // As Play's logback writes its level and logger: with colour codes.
    console.log('\x1b[34mINFO \x1b[0;39m \x1b[36mcoloured.Logger\x1b[0;39m - a line with colours');
    res.end('logged');
    return;
  }
  if (req.url === '/missing') {
    res.statusCode = 404;
    res.end('not here');
    return;
  }
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(facts(req)));
});

// Answers an HTTP Upgrade by echoing what the client sends (enough to prove upgrades pass through).
server.on('upgrade', (req, socket) => {
  socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n');
  socket.on('data', (data) => socket.write(data));
});

process.on('SIGTERM', () => {
  console.log('received SIGTERM, closing');
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
});

setTimeout(() => {
  server.listen(8080, '0.0.0.0', () => console.log(`release ${release} listening on 0.0.0.0:8080`));
}, slowMs);
