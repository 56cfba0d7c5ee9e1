import { Logger } from '@nestjs/common';
import { Mailer } from './mailer';

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
