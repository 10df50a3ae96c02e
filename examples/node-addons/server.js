// Example app for slipway's add-on tests: it reaches its PostgreSQL and Redis add-ons with
// exactly the variables the platform injects, and proves it over HTTP.
const http = require('node:http');
const pg = require('pg');
const { createClient } = require('redis');

// Non-secret variables shown on GET / so tests can see what the app received.
const shown = (process.env.SHOW_VARS || 'POSTGRESQL_ADDON_HOST,POSTGRESQL_ADDON_DB,POSTGRESQL_ADDON_VERSION,REDIS_HOST,REDIS_PORT,GREETING')
  .split(',')
  .filter(Boolean);

let pool;
function database() {
  if (!process.env.POSTGRESQL_ADDON_URI) throw new Error('POSTGRESQL_ADDON_URI is not set: link a postgresql add-on');
  pool ??= new pg.Pool({ connectionString: process.env.POSTGRESQL_ADDON_URI, max: 2, connectionTimeoutMillis: 5000 });
  return pool;
}

let redis;
async function cache() {
  if (!process.env.REDIS_URL) throw new Error('REDIS_URL is not set: link a redis add-on');
  if (!redis) {
    redis = createClient({ url: process.env.REDIS_URL, socket: { connectTimeout: 5000, reconnectStrategy: false } });
    redis.on('error', () => {}); // a failed command answers 500; the process stays up
    await redis.connect();
  }
  return redis;
}

const routes = {
  '/': async () => ({ ok: true, env: Object.fromEntries(shown.map((name) => [name, process.env[name] ?? null])) }),
  '/db': async () => {
    const { rows } = await database().query('SELECT 1 + 1 AS sum, current_database() AS database, current_user AS user');
    return { sum: rows[0].sum, database: rows[0].database, user: rows[0].user };
  },
  '/cache': async () => {
    const client = await cache();
    const value = `set at ${new Date().toISOString()}`;
    await client.set('slipway-example', value);
    return { set: value, got: await client.get('slipway-example') };
  },
  // Writes ?value= to both add-ons, so a later /recall can show it outlived a restart.
  '/remember': async (url) => {
    const value = url.searchParams.get('value') ?? '';
    await database().query('CREATE TABLE IF NOT EXISTS memories (value text NOT NULL)');
    await database().query('INSERT INTO memories (value) VALUES ($1)', [value]);
    await (await cache()).rPush('memories', value);
    return { remembered: value };
  },
  '/recall': async () => {
    const { rows } = await database().query('SELECT value FROM memories ORDER BY value');
    const cached = await (await cache()).lRange('memories', 0, -1);
    return { database: rows.map((row) => row.value), cache: [...cached].sort() };
  },
};

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://app');
  const route = routes[url.pathname];
  if (!route) {
    res.writeHead(404, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ error: 'not found' }));
  }
  try {
    const body = JSON.stringify(await route(url));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  } catch (error) {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: error.message }));
  }
});

server.listen(8080, '0.0.0.0', () => console.log('listening on 0.0.0.0:8080'));

process.on('SIGTERM', () => {
  server.close();
  Promise.allSettled([pool?.end(), redis?.quit()]).then(() => process.exit(0));
});
