import { Logger } from '@nestjs/common';
import { Mailer } from './mailer';
import { startSmtpSink } from '../../../test/support/smtp-sink';

/** Without SMTP_URL the mail goes to the log: as a warning, so the link shows at npm run stack's LOG_LEVEL=warn. */
describe('Mailer without SMTP_URL', () => {
  it('writes the whole mail, link included, at the warn level', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    try {
      await new Mailer(undefined, 'portal@example.com').send({
        to: 'dev@example.com',
        subject: 'Verify your email',
        text: 'Open\nhttp://localhost:3003/verify?token=abc\n',
      });
      expect(warn).toHaveBeenCalledWith(
        'No SMTP_URL: mail to dev@example.com not sent. Verify your email: Open http://localhost:3003/verify?token=abc',
      );
      expect(log).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
      log.mockRestore();
    }
  });
});

describe('Mailer recipients', () => {
  it('sends to the one address given, and refuses anything that could name a second one', async () => {
    const sink = await startSmtpSink();
    const mailer = new Mailer(sink.url, 'Portal <portal@example.com>');
    try {
      await mailer.send({ to: 'dev@example.com', subject: 'One', text: 'x' });
      expect(sink.mails.map((m) => m.to)).toEqual([['dev@example.com']]);
      for (const to of ['a,attacker\n@evil.test', 'a,attacker@evil.test', 'Dev <dev@example.com>', 'a b@example.com'])
        await expect(mailer.send({ to, subject: 'Two', text: 'x' })).rejects.toThrow('one plain address');
      expect(sink.mails).toHaveLength(1);
    } finally {
      mailer.close();
      await sink.close();
    }
  });
});
