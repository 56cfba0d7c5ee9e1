import { Logger } from '@nestjs/common';
import { SLOW_AFTER_FAILURES } from '../../../apps/console/src/auth/sign-in-throttle';
import { ConsoleClient, ConsoleUnderTest, startConsole } from '../../support/console';
import { adminCall } from '../../support/gateway';
import { withStack } from '../../support/with-stack';

/**
 * Console sign-in guesses (issue #36 finding 6): throttled per address and slowed after failures, every failure
 * and refusal logged at warn without the token.
 */
describe('operator console sign-in throttle', () => {
  let console_: ConsoleUnderTest;
  // Before withStack: afterAll hooks run in declaration order, and the console closes before the gateway.
  afterAll(async () => {
    await console_?.close();
  });
  const stack = withStack({ petsUrl: 'http://127.0.0.1:1', gateway: {}, timeoutMs: 180_000 });

  beforeAll(async () => {
    console_ = await startConsole(stack.gateway.adminUrl);
  }, 180_000); // several servers to start: slow on a loaded 2-core runner

  it('slows guesses from one address after failures, refusing even a right token until the wait ends, and logs them', async () => {
    const created = await adminCall(stack.gateway, 'POST', '/tokens', {
      name: 'operator-throttled',
      scopes: ['consumers:read'],
    });
    const token = (created.body as { token: string }).token;
    const warn = jest.spyOn(Logger.prototype, 'warn');
    const client = new ConsoleClient(console_.url);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < SLOW_AFTER_FAILURES; i += 1)
        statuses.push((await client.signIn(`adm_guess-${i}-secret`)).status);
      expect(statuses).toEqual(Array(SLOW_AFTER_FAILURES).fill(401));
      const slowed = await client.signIn(token);
      expect(slowed.status).toBe(429);
      expect(slowed.text).toMatch(/Too many refused tokens from your address\. Wait \d+ seconds? and try again\./);
      const logged = warn.mock.calls.map(([message]) => JSON.stringify(message)).join('\n');
      expect(logged).toContain('"event":"console.sign-in.failed","address":"127.0.0.1"');
      expect(logged).toContain('"event":"console.sign-in.throttled"');
      expect(logged).not.toMatch(/adm_guess|secret/);
      expect(logged).not.toContain(token);
      // Once the wait is over (5 s; the deadline is generous for a loaded CI), the right token signs in.
      const deadline = Date.now() + 20_000;
      let signedIn = await client.signIn(token);
      while (signedIn.status === 429 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        signedIn = await client.signIn(token);
      }
      expect([signedIn.status, signedIn.location]).toEqual([303, '/']);
    } finally {
      warn.mockRestore();
    }
  });
});
