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
  };
}

const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(facts()));
});

server.listen(port, '0.0.0.0', () => console.log(`listening on 0.0.0.0:${port}`));
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    console.log(`received ${signal}, closing the server`);
    server.close(() => {
      console.log('server closed, exiting');
      process.exit(0);
    });
  });
}
process.on('uncaughtException', (error) => {
  console.error('uncaughtException:', error);
  process.exit(1);
});
process.on('unhandledRejection', (reason) => {
  console.error('unhandledRejection:', reason);
  process.exit(1);
});
