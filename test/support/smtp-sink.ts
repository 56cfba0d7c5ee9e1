import { createServer, Server, Socket } from 'node:net';

export interface CaughtMail {
  from: string;
  to: string[];
  /** The raw message (headers and body), as the client sent it. */
  raw: string;
  subject: string;
  /** The text body, quoted-printable decoded. */
  text: string;
}

export interface SmtpSink {
  /** smtp://127.0.0.1:<port> for SMTP_URL. */
  url: string;
  mails: CaughtMail[];
  /** The first mail to `to` (whose subject matches) that arrives, waiting up to `timeoutMs`. */
  next(to: string, subject?: RegExp, timeoutMs?: number): Promise<CaughtMail>;
  close(): Promise<void>;
}

function decodeQuotedPrintable(body: string): string {
  return body
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

function parse(from: string, to: string[], raw: string): CaughtMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1] ?? '';
  const text = /quoted-printable/i.test(header('Content-Transfer-Encoding')) ? decodeQuotedPrintable(body) : body;
  return { from, to, raw, subject: header('Subject'), text: text.replace(/\r\n/g, '\n') };
}

/**
 * A tiny SMTP server for tests (RFC 5321's few commands a client like nodemailer sends: EHLO/HELO, MAIL, RCPT, DATA,
 * RSET, NOOP, QUIT; no TLS, no auth): it accepts every mail and keeps it, so a test reads the link a mail holds.
 */
export async function startSmtpSink(): Promise<SmtpSink> {
  const mails: CaughtMail[] = [];
  const waiters: Array<() => void> = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffer = '';
    let inData = false;
    let from = '';
    let to: string[] = [];
    const reply = (line: string) => socket.write(`${line}\r\n`);
    reply('220 smtp-sink ready');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end === -1) return;
          const raw = buffer.slice(0, end).replace(/\r\n\.\./g, '\r\n.');
          buffer = buffer.slice(end + 5);
          inData = false;
          mails.push(parse(from, to, Buffer.from(raw, 'latin1').toString('utf8')));
          for (const wake of waiters.splice(0)) wake();
          reply('250 OK: queued');
          continue;
        }
        const newline = buffer.indexOf('\r\n');
        if (newline === -1) return;
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO') socket.write('250-smtp-sink\r\n250 8BITMIME\r\n');
        else if (verb === 'HELO') reply('250 smtp-sink');
        else if (verb === 'MAIL') {
          from = /<([^>]*)>/.exec(line)?.[1] ?? '';
          to = [];
          reply('250 OK');
        } else if (verb === 'RCPT') {
          to.push(/<([^>]*)>/.exec(line)?.[1] ?? '');
          reply('250 OK');
        } else if (verb === 'DATA') {
          inData = true;
          reply('354 End data with <CR><LF>.<CR><LF>');
        } else if (verb === 'QUIT') {
          reply('221 Bye');
          socket.end();
          return;
        } else if (verb === 'RSET' || verb === 'NOOP') reply('250 OK');
        else reply('502 Command not implemented');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    async next(to, subject, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = mails.find((m) => m.to.includes(to) && (!subject || subject.test(m.subject)));
        if (found) {
          mails.splice(mails.indexOf(found), 1);
          return found;
        }
        const left = deadline - Date.now();
        if (left <= 0)
          throw new Error(
            `No mail to ${to}${subject ? ` matching ${subject}` : ''} within ${timeoutMs} ms (caught: ${mails.map((m) => `${m.to.join(',')}: ${m.subject}`).join('; ') || 'none'})`,
          );
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
