import { createServer } from 'node:net';

export type PortRange = [number, number];

export function assertPortRange(range: PortRange): void {
  const [low, high] = range;
  if (!Number.isInteger(low) || !Number.isInteger(high) || low < 1024 || high > 65535 || low > high) {
    throw new Error(`Redis port range ${low}-${high} is invalid: expected two ports between 1024 and 65535, low first.`);
  }
}

/** Ports of the range in the order they are tried, skipping those already given to add-ons. */
export function candidatePorts(range: PortRange, taken: ReadonlySet<number>): number[] {
  assertPortRange(range);
  const ports: number[] = [];
  for (let port = range[0]; port <= range[1]; port++) if (!taken.has(port)) ports.push(port);
  return ports;
}

/** True when nothing else listens on `port` at any of `hosts`. */
export async function portIsFree(port: number, hosts: string[]): Promise<boolean> {
  for (const host of hosts) {
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
    });
    if (!free) return false;
  }
  return true;
}

export async function allocatePort(
  range: PortRange,
  taken: ReadonlySet<number>,
  hosts: string[],
  kind: 'Redis' | 'PostgreSQL' = 'Redis',
): Promise<number> {
  for (const port of candidatePorts(range, taken)) {
    if (await portIsFree(port, hosts)) return port;
  }
  throw new Error(
    `No free port left for a new ${kind} add-on in ${range[0]}-${range[1]} (${taken.size} used by add-ons, the rest by other programs). ` +
      `Widen the ${kind} port range in slipway's configuration or delete unused ${kind} add-ons.`,
  );
}
