import { isIP } from 'node:net';
import nodemailer from 'nodemailer';
import type { EgressGuard } from '../network/egress-guard.js';
import type { AttemptOutcome } from './webhook-sender.js';

export interface SmtpSettings {
  /** `smtp://user:pass@host:port` or `smtps://…`; its password never leaves this module. */
  url: URL;
  /** The From address. */
  from: string;
  /** Each mail's connection goes to an address this guard let through, checked when it is made. */
  guard: EgressGuard;
}

/** Mail through the operator's SMTP server (`--smtp-url`). */
export class MailSender {
  constructor(private readonly settings: SmtpSettings) {}

  async send(to: string[], subject: string, text: string): Promise<AttemptOutcome> {
    const url = this.settings.url;
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = url.port ? Number(url.port) : url.protocol === 'smtps:' ? 465 : 587;
    try {
      // The name is resolved and checked here, and the transport connects to that address
      // (TLS still checks the certificate against the name): nodemailer's own look-up would
      // not go through the guard.
      const [address] = await this.settings.guard.resolve(host, port);
      const transport = nodemailer.createTransport({
        host: address!.address,
        port,
        secure: url.protocol === 'smtps:',
        ...(isIP(host) ? {} : { servername: host }),
        auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
        connectionTimeout: 10_000,
        greetingTimeout: 10_000,
        socketTimeout: 20_000,
      });
      try {
        await transport.sendMail({ from: this.settings.from, to, subject, text });
      } finally {
        transport.close();
      }
      return { ok: true, statusCode: null, error: null };
    } catch (error) {
      const password = url.password ? decodeURIComponent(url.password) : undefined;
      let message = error instanceof Error ? error.message : String(error);
      if (password) message = message.replaceAll(password, '***');
      return { ok: false, statusCode: null, error: `SMTP: ${message}` };
    }
  }

  /** Nothing is kept open between mails: each one connects to the address checked for it. */
  close(): void {}
}
