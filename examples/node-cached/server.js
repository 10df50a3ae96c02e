// Example app for slipway's tests: an express app that reports what it runs on.
// RELEASE (a file the tests commit) tells releases apart.
const fs = require('node:fs');
const express = require('express');

const release = fs.existsSync('RELEASE') ? fs.readFileSync('RELEASE', 'utf8').trim() : 'none';

const port = Number(process.env.PORT || 8080);
const app = express();

app.get('/', (_req, res) => {
  res.json({
    runtime: 'node',
    version: process.version,
    nodeEnv: process.env.NODE_ENV ?? null,
    express: require('express/package.json').version,
    release,
    greeting: process.env.GREETING ?? null,
  });
});

const server = app.listen(port, '0.0.0.0', () => console.log(`listening on 0.0.0.0:${port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
