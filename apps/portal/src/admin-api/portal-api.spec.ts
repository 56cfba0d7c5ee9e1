import { accountLabel } from './portal-api';

const id = '0b6f3c2e-9a1d-4c5e-8f7a-2d4b6c8e0f12';

describe('accountLabel (X-On-Behalf-Of of the portal)', () => {
  it('names the account by id and email', () => {
    expect(accountLabel({ accountId: id, email: 'zoe@example.com', address: '::1' })).toBe(
      `account:${id} zoe@example.com`,
    );
  });

  it('keeps a non-ASCII email whose percent-encoded label fits the admin API bound of 320', () => {
    const email = 'zoë@example.com';
    expect(accountLabel({ accountId: id, email, address: undefined })).toBe(`account:${id} ${email}`);
  });

  it('names the account by id alone when the encoded label would pass 320 characters (the admin API refuses it)', () => {
    const email = `${'é'.repeat(50)}@example.com`; // 62 characters, 312 once percent-encoded
    expect(accountLabel({ accountId: id, email, address: undefined })).toBe(`account:${id}`);
  });
});
