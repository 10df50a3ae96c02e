export interface DaemonOptions {
  dataDir: string;
  listen: string;
  apiPort: number;
  sshPort: number;
  routerPort: number;
  domain: string;
  /** Host name users reach this machine by (git URLs); defaults to the domain. */
  publicHost: string;
}

export const DEFAULT_API_PORT = 4040;
export const DEFAULT_SSH_PORT = 2222;
export const DEFAULT_ROUTER_PORT = 8000;
export const DEFAULT_DOMAIN = 'localhost';

export function parsePort(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`${flag} must be a port number between 0 and 65535, not ${JSON.stringify(value)}.`);
  }
  return port;
}

export function checkDomain(value: string): string {
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(value)) {
    throw new Error(`--domain must be a DNS name such as "localhost" or "apps.example.org", not ${JSON.stringify(value)}.`);
  }
  return value;
}
