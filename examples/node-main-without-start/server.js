// Example app for slipway's tests: reports what it runs on and what it sees.
const http = require('node:http');
const fs = require('node:fs');

const port = Number(process.env.PORT || 8080);

function resolvable(name) {
  try {
    require.resolve(name);
    return true;
  } catch {
    return false;
  }
}

function readOrNull(file) {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    return null;
  }
}

function facts() {
  return {
    runtime: 'node',
    version: process.version,
    nodeEnv: process.env.NODE_ENV ?? null,
    devDependency: resolvable('is-number'),
    greeting: process.env.GREETING ?? null,
    startedBy: (process.env.npm_config_user_agent ?? '').split(' ')[0] || null,
    lifecycle: readOrNull('lifecycle.log'),
  };
}

const server = http.createServer((req, res) => {
  if (req.url === '/exit') {
    // A clean end (status 0): slipway runs poststart then, as npm does after a start script.
    res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
    res.end(JSON.stringify({ exiting: true }), () => process.exit(0));
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(facts()));
});

server.listen(port, '0.0.0.0', () => console.log(`listening on 0.0.0.0:${port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
