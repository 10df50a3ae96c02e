// Example app for slipway's tests: reports what it runs on and what it sees.
import { existsSync, readFileSync } from 'node:fs';

const port = Number(process.env.PORT || 8080);

function resolvable(name: string): boolean {
  try {
    Bun.resolveSync(name, import.meta.dir);
    return true;
  } catch {
    return false;
  }
}

const server = Bun.serve({
  hostname: '0.0.0.0',
  port,
  fetch() {
    return Response.json({
      runtime: 'bun',
      version: Bun.version,
      nodeEnv: process.env.NODE_ENV ?? null,
      devDependency: resolvable('is-number'),
      greeting: process.env.GREETING ?? null,
      startedBy: (process.env.npm_config_user_agent ?? '').split(' ')[0] || null,
      lifecycle: existsSync('lifecycle.log') ? readFileSync('lifecycle.log', 'utf8').split('\n').filter(Boolean) : null,
    });
  },
});

console.log(`listening on 0.0.0.0:${server.port}`);
process.on('SIGTERM', () => {
  console.log('received SIGTERM, stopping');
  server.stop();
  process.exit(0);
});
