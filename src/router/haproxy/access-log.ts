/**
 * HAProxy sends one raw line per request (ACCESS_LOG_FORMAT in config.ts) to a UDP port on
 * loopback (Node's dgram has no unix datagram sockets); this turns each line into an
 * AccessRecord. Lines from backends that are not apps (404 page, ACME) are never sent.
 */
import { createSocket, type Socket } from "node:dgram";
import type { AccessRecord } from "../router.js";

/** Parses one line; `appOf` names the app a backend serves (undefined: not an app, dropped). */
export function parseAccessLine(line: string, appOf: (backend: string) => string | undefined): AccessRecord | undefined {
  const fields = line.trim().split(" ");
  if (fields.length < 11) return undefined;
  const [backend, time, client, method, path, status, bytes, duration, instance, tls] = fields;
  const appId = appOf(backend!);
  if (!appId) return undefined;
  const seconds = Number(time);
  if (!Number.isFinite(seconds)) return undefined;
  return {
    time: new Date(Math.round(seconds * 1000)),
    appId,
    host: fields.slice(10).join(" "),
    client: client!,
    method: method!,
    path: path!,
    status: Number(status),
    bytes: Number(bytes) || 0,
    durationMs: Math.max(0, Number(duration) || 0),
    // HAProxy writes "-:-" or "<NOSRV>" variants when no server answered (503 of an app with nothing running).
    instance: /^\d+\.\d+\.\d+\.\d+:\d+$/.test(instance!) ? instance! : "",
    tls: tls === "1",
  };
}

export class AccessLogReceiver {
  private socket: Socket | undefined;

  constructor(private readonly appOf: (backend: string) => string | undefined, private readonly onRecord: (record: AccessRecord) => void) {}

  /** Listens on a free loopback port and returns it. */
  async start(): Promise<number> {
    const socket = createSocket({ type: "udp4", recvBufferSize: 4 * 1024 * 1024 });
    this.socket = socket;
    socket.on("message", (message) => {
      for (const line of message.toString("utf8").split("\n")) {
        if (!line) continue;
        const record = parseAccessLine(line, this.appOf);
        if (record) this.onRecord(record);
      }
    });
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.bind(0, "127.0.0.1", () => resolve());
    });
    return socket.address().port;
  }

  stop(): void {
    this.socket?.close();
    this.socket = undefined;
  }
}
