import nodemailer, { type Transporter } from 'nodemailer';
import type { AttemptOutcome } from './webhook-sender.js';

export interface SmtpSettings {
  /** `smtp://user:pass@host:port` or `smtps://…`; its password never leaves this module. */
  url: URL;
  /** The From address. */
  from: string;
}

/** Mail through the operator's SMTP server (`--smtp-url`). */
export class MailSender {
  private readonly transport: Transporter;

  constructor(private readonly settings: SmtpSettings) {
    const url = settings.url;
    this.transport = nodemailer.createTransport({
      host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port ? Number(url.port) : url.protocol === 'smtps:' ? 465 : 587,
      secure: url.protocol === 'smtps:',
      auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
  }

  async send(to: string[], subject: string, text: string): Promise<AttemptOutcome> {
    try {
      await this.transport.sendMail({ from: this.settings.from, to, subject, text });
      return { ok: true, statusCode: null, error: null };
    } catch (error) {
      const password = this.settings.url.password ? decodeURIComponent(this.settings.url.password) : undefined;
      let message = error instanceof Error ? error.message : String(error);
      if (password) message = message.replaceAll(password, '***');
      return { ok: false, statusCode: null, error: `SMTP: ${message}` };
    }
  }

  close(): void {
    this.transport.close();
  }
}
