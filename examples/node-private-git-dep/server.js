// Example app for slipway's tests: reports the private git dependency it required and what of
// the build's SSH key it can see (nothing, if the platform keeps the key to the build).
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const os = require('node:os');

const port = Number(process.env.PORT || 8080);

function facts() {
  const values = Object.values(process.env).join('\n');
  return {
    runtime: 'node',
    version: process.version,
    gitGreeting: (() => {
      try {
        return require('@slipway-test/git-greeting').greeting;
      } catch {
        return null;
      }
    })(),
    sshKeyInEnv: 'CC_SSH_PRIVATE_KEY' in process.env,
    gitSshCommandInEnv: 'GIT_SSH_COMMAND' in process.env,
    privateKeyTextInEnv: values.includes('PRIVATE KEY'),
    sshFolderBesideApp: fs.existsSync(path.join(__dirname, '.ssh')),
    sshFolderInHome: fs.existsSync(path.join(process.env.HOME || os.homedir(), '.ssh')),
  };
}

const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(facts()));
});

server.listen(port, '0.0.0.0', () => console.log(`listening on 0.0.0.0:${port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
