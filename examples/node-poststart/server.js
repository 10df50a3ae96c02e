// Example app for slipway's tests: reports the scripts that ran, and ends cleanly on GET /exit.
const http = require('node:http');
const fs = require('node:fs');

const port = Number(process.env.PORT || 8080);

function lifecycle() {
  try {
    return fs.readFileSync('lifecycle.log', 'utf8').split('\n').filter(Boolean);
  } catch {
    return null;
  }
}

const server = http.createServer((req, res) => {
  if (req.url === '/exit') {
    // The end of the start script with status 0: the package manager runs poststart then.
    res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
    res.end(JSON.stringify({ exiting: true }), () => process.exit(0));
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      runtime: typeof Bun === 'undefined' ? 'node' : 'bun',
      greeting: process.env.GREETING ?? null,
      startedBy: (process.env.npm_config_user_agent ?? '').split(' ')[0] || null,
      lifecycle: lifecycle(),
    }),
  );
});

server.listen(port, '0.0.0.0', () => console.log(`listening on 0.0.0.0:${port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
