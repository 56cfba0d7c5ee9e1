import { Logger } from '@nestjs/common';
import nodemailer, { Transporter } from 'nodemailer';

/** One `local@domain` without anything that separates, quotes or comments addresses, nor whitespace. */
const ONE_ADDRESS = /^[^\s,;:<>"()[\]\\@]+@[^\s,;:<>"()[\]\\@]+$/;

export interface Mail {
  /** One address (the accounts' rule: a single addr-spec); anything that could name a second one is refused. */
  to: string;
  subject: string;
  text: string;
}

/**
 * Sends the portal's mail through SMTP_URL (nodemailer). Without SMTP_URL (development and tests only: production
 * refuses to start without it) the mail is written to the log instead, as a warning (seen at the default levels of
 * npm start and npm run stack), link included, so a developer can follow it.
 */
export class Mailer {
  private readonly logger = new Logger('Mail');
  private readonly transport?: Transporter;

  constructor(
    smtpUrl: string | undefined,
    private readonly from: string,
  ) {
    if (smtpUrl) this.transport = nodemailer.createTransport(smtpUrl);
  }

  async send(mail: Mail): Promise<void> {
    // Defence in depth behind the form's rule: nodemailer reads a string as an address list ("a,b@c" is two).
    if (!ONE_ADDRESS.test(mail.to)) throw new Error('a mail goes to one plain address');
    if (!this.transport) {
      // One line (the log is JSON lines): the link stands out in it. A warning (a mail was not sent), so that it
      // shows at every level a developer runs with (npm run stack runs at LOG_LEVEL=warn).
      this.logger.warn(
        `No SMTP_URL: mail to ${mail.to} not sent. ${mail.subject}: ${mail.text.replace(/\s+/g, ' ').trim()}`,
      );
      return;
    }
    // An address object, not a string: nodemailer takes it as one recipient and never parses it as a list.
    await this.transport.sendMail({
      from: this.from,
      to: { name: '', address: mail.to },
      subject: mail.subject,
      text: mail.text,
    });
  }

  /** Sends without holding the answer back (a page never waits on SMTP: same timing whether a mail goes or not). */
  sendLater(mail: Mail): void {
    this.send(mail).catch((error: Error) => this.logger.error(`Mail to ${mail.to} failed: ${error.message}`));
  }

  close(): void {
    this.transport?.close();
  }
}
