import { setTimeout as sleep } from 'node:timers/promises';
import { AfterAnswer } from '../../../apps/portal/src/accounts/after-answer';
import { PortalStack, startPortalStack } from '../../support/portal';
import { linkIn, PortalVisitor } from '../../support/portal-visitor';

const PASSWORD = 'the owner own passphrase';

/**
 * Throttling without denial (NIST SP 800-63B 5.2.2): under a sustained guessing attack on one account (about two
 * guesses a second, each from a new address), the owner's right password still gets in from the address block the
 * account was verified from (remembered at verification, though she never signed in from it), and from a new address
 * after the mailed reset link (the block that used it is remembered too); a new address without either waits.
 */
describe('sign-in under a sustained password-guessing attack', () => {
  let stack: PortalStack;

  beforeAll(async () => {
    stack = await startPortalStack({
      // Every address is its own block here; the account's delay starts after three failures.
      portalEnv: { PORTAL_THROTTLE_ADDRESS_LIMIT: '10000', PORTAL_SIGN_IN_DELAY_AFTER: '3' },
    });
  }, 180_000); // several servers to start: slow on a loaded 2-core runner
  afterAll(async () => {
    await stack?.close();
  });

  const visitor = (address: string) => new PortalVisitor(stack.portal.url, address);
  const drain = () => stack.portal.app.get(AfterAnswer).drain();

  it("lets the owner's right password in from the verified address and after a mailed reset link, every time, while guesses pour in", async () => {
    const email = `owner-${Date.now()}@example.com`;
    const verifiedFrom = '2001:db8:600d:1::7';
    expect((await visitor(verifiedFrom).submit('/signup', { email, password: PASSWORD })).status).toBe(200);
    await drain();
    const token = linkIn((await stack.smtp.next(email, /Verify/)).text, '/verify');
    const verified = await visitor(verifiedFrom).submit(
      `/verify?token=${token}`,
      { token, password: PASSWORD },
      '/verify',
    );
    expect(verified.status).toBe(303);

    // The attacker: two guesses a second, each from an address (and /64) never seen before.
    let attacking = true;
    const guesses: number[] = [];
    const attack = (async () => {
      for (let i = 1; attacking; i += 1) {
        const from = `2001:db8:bad:${i.toString(16)}::1`;
        guesses.push((await visitor(from).submit('/login', { email, password: `guess number ${i}` })).status);
        await sleep(500);
      }
    })();
    try {
      // Until the account's delay is in force (the attacker's guesses hold its slots).
      while (!guesses.includes(429)) await sleep(100);

      const owner: number[] = [];
      const strangers: number[] = [];
      for (let round = 1; round <= 6; round += 1) {
        // Another address of the verified /64: the block, not the single address, is remembered.
        owner.push((await visitor(`2001:db8:600d:1::${round}`).submit('/login', { email, password: PASSWORD })).status);
        strangers.push((await visitor(`198.51.100.${round}`).submit('/login', { email, password: PASSWORD })).status);
        await sleep(700);
      }
      expect(owner).toEqual([303, 303, 303, 303, 303, 303]);
      // Without the remembered block, the right password waits like the guesses (this is what the attack does).
      expect(strangers).toContain(429);

      // From a new address, the mailed reset link: its block is remembered, the new password gets in at once.
      const travelling = '203.0.113.77';
      expect((await visitor(travelling).submit('/reset', { email })).status).toBe(200);
      await drain();
      const reset = linkIn((await stack.smtp.next(email, /Reset/)).text, '/reset/confirm');
      const changed = await visitor(travelling).submit(
        `/reset/confirm?token=${reset}`,
        { token: reset, password: 'the owner new passphrase' },
        '/reset/confirm',
      );
      expect(changed.status).toBe(303);
      // The guesses go on and hold the account's delay again...
      const before = guesses.length;
      while (guesses.length < before + 6) await sleep(100);
      for (let round = 1; round <= 3; round += 1) {
        const signIn = await visitor(travelling).submit('/login', { email, password: 'the owner new passphrase' });
        expect(signIn).toMatchObject({ status: 303, location: '/dashboard' });
        await sleep(700);
      }
    } finally {
      attacking = false;
      await attack;
    }
    // None of the guesses got in.
    expect(guesses.filter((status) => status !== 401 && status !== 429)).toEqual([]);
  }, 90_000);
});
