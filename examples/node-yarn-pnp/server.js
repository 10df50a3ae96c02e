// Example app for slipway's tests: a dependency loaded through Yarn's Plug'n'Play.
const http = require('node:http');
const ms = require('ms');

const port = Number(process.env.PORT || 8080);

const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      runtime: 'node',
      version: process.version,
      nodeEnv: process.env.NODE_ENV ?? null,
      greeting: process.env.GREETING ?? null,
      startedBy: (process.env.npm_config_user_agent ?? '').split(' ')[0] || null,
      // Set by the Plug'n'Play runtime: proof the dependency came through .pnp.cjs.
      pnp: process.versions.pnp ?? null,
      dependency: ms('2h'),
    }),
  );
});

server.listen(port, '0.0.0.0', () => console.log(`listening on 0.0.0.0:${port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
