// Example app for slipway's tests: a request handler that micro (a dependency's binary, named
// by the start script) serves, loading its own dependency through Yarn's Plug'n'Play.
const ms = require('ms');

// Registered before micro's own handler, so the log shows the signal reached this process.
process.on('SIGTERM', () => console.log('received SIGTERM, closing the server'));

module.exports = () => ({
  runtime: 'node',
  version: process.version,
  nodeEnv: process.env.NODE_ENV ?? null,
  startedBy: (process.env.npm_config_user_agent ?? '').split(' ')[0] || null,
  // Set by the Plug'n'Play runtime: proof the dependency came through .pnp.cjs.
  pnp: process.versions.pnp ?? null,
  dependency: ms('2h'),
});
