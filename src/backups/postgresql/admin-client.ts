import type pg from 'pg';
import { ADMIN_ROLE } from '../../addons/postgresql/cluster-config.js';
import { asSuperuser } from '../../addons/postgresql/superuser-connection.js';

/** A cluster reached over its unix socket as slipway's superuser: the live one, or a restored copy. */
export interface SocketTarget {
  socketDir: string;
  port: number;
  password: string;
}

/**
 * Opens one connection to `database` as the superuser (search path pinned, see
 * superuser-connection.ts), hands it over, and closes it whatever happens.
 */
export function asAdmin<T>(target: SocketTarget, database: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  return asSuperuser({ host: target.socketDir, port: target.port, user: ADMIN_ROLE, password: target.password }, use, { database });
}
