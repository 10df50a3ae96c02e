import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * The first port of the kernel's ephemeral range: ports below it are never taken as the source
 * port of an outgoing connection, so one handed out here stays free until its user binds it,
 * however many connections the machine opens meanwhile (a port the OS picked from the ephemeral
 * range was seen taken by a client's connection before the daemon bound it).
 */
function ephemeralRangeStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const port = Number(low);
    return Number.isInteger(port) && port > 12_000 ? port : 32_768;
  } catch {
    return 32_768;
  }
}

const FIRST = 10_000;
const handedOut = new Set<number>();

function bindable(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/** A TCP port free on every address right now, below the ephemeral range, not handed out before by this process. */
export async function freePort(): Promise<number> {
  const end = ephemeralRangeStart();
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = FIRST + Math.floor(Math.random() * (end - FIRST));
    if (handedOut.has(port)) continue;
    if ((await bindable(port, '0.0.0.0')) && (await bindable(port, '127.0.0.1'))) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`No free TCP port between ${FIRST} and ${end} after 200 tries.`);
}
