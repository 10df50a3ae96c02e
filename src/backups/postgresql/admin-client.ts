import pg from 'pg';
import { ADMIN_ROLE } from '../../addons/postgresql/cluster-config.js';

/** A cluster reached over its unix socket as slipway's superuser: the live one, or a restored copy. */
export interface SocketTarget {
  socketDir: string;
  port: number;
  password: string;
}

/** Opens one connection to `database` as the superuser, hands it over, and closes it whatever happens. */
export async function asAdmin<T>(target: SocketTarget, database: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ host: target.socketDir, port: target.port, user: ADMIN_ROLE, password: target.password, database });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
