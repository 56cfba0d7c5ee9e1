import { Logger } from '@nestjs/common';
import { AppMetrics } from '@app/platform';
import { DataSource } from 'typeorm';
import { AfterAnswer } from '../../../apps/portal/src/accounts/after-answer';
import { adminCall } from '../../support/gateway';
import { PortalStack, startPortalStack } from '../../support/portal';
import { linkIn, PortalVisitor } from '../../support/portal-visitor';

const PASSWORD = 'a long enough passphrase';
let counter = 0;
const newEmail = (label: string) => `${label}-${Date.now()}-${(counter += 1)}@example.com`;

/**
 * The portal's cap on new keys is per address block (IPv6 /64, IPv4 address) with a fleet-wide alarm, never a
 * fleet-wide refusal: sign-ups verified from many /64 blocks cannot keep a developer from signing in and getting a
 * key, and a developer whose own block is spent is signed in and told when the key comes, and gets it then.
 */
describe('new keys capped per address block, never a denial of the fleet', () => {
  let stack: PortalStack;
  const FLEET_ALARM = 3;
  const FLOOD = 8;

  beforeAll(async () => {
    stack = await startPortalStack({
      portalEnv: {
        PORTAL_THROTTLE_ADDRESS_LIMIT: '10000',
        PORTAL_CONSUMERS_PER_HOUR: String(FLEET_ALARM),
        PORTAL_CONSUMERS_PER_BLOCK_PER_HOUR: '1',
        PORTAL_METRICS_PORT: '0',
      },
    });
  }, 180_000); // several servers to start: slow on a loaded 2-core runner
  afterAll(async () => {
    await stack?.close();
  });

  const visitor = (address: string) => new PortalVisitor(stack.portal.url, address);

  /** Signs up from `address` and answers the verification link the mail holds. */
  async function signUp(email: string, address: string): Promise<string> {
    expect((await visitor(address).submit('/signup', { email, password: PASSWORD })).status).toBe(200);
    await stack.portal.app.get(AfterAnswer).drain();
    return linkIn((await stack.smtp.next(email, /Verify/)).text, '/verify');
  }

  /** "Verify my email", and the page its 303 leads to (the first key, or when it comes), as a browser sees it. */
  const verify = (token: string, as: PortalVisitor) =>
    as.submitAndFollow(`/verify?token=${token}`, { token, password: PASSWORD }, '/verify');

  const portalConsumers = async () => {
    const reply = await adminCall(stack.gateway, 'GET', '/consumers?limit=100');
    return (reply.body as { items: Array<{ name: string }> }).items.filter((c) => c.name.startsWith('portal-'));
  };

  it('lets a developer sign in and get a key after a flood of verified sign-ups from many /64 blocks, and alarms operators once', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      // The attacker: verified accounts from FLOOD different /64s, far past the fleet's hourly figure.
      for (let i = 1; i <= FLOOD; i += 1) {
        const address = `2001:db8:${i.toString(16)}:1::1`;
        const verified = await verify(await signUp(newEmail('flood'), address), visitor(address));
        expect(verified.status).toBe(200);
        expect(verified.text).toContain('data-testid="new-key"');
      }
      // A second account from a block that had its key this hour waits for its key (signed in, told when).
      const again = '2001:db8:1:1::99';
      const waiting = await verify(await signUp(newEmail('flood'), again), visitor(again));
      expect(waiting.status).toBe(200);
      expect(waiting.text).toContain('Your API key is on its way');
      expect(waiting.text).toMatch(/data-testid="key-comes-at">\d{4}-\d\d-\d\d \d\d:\d\d UTC</);

      // The developer, from her own address, after the flood: verified with her key at once...
      const developer = newEmail('developer');
      const home = visitor('198.51.100.20');
      const verified = await verify(await signUp(developer, '198.51.100.20'), home);
      expect(verified.status).toBe(200);
      const key = /data-testid="new-key" id="new-key">([^<]+)</.exec(verified.text)?.[1] ?? '';
      expect(key).toMatch(/\S{20,}/);
      const pets = await fetch(`${stack.gateway.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } });
      expect(pets.status).toBe(200);
      // ...and signs in again, from anywhere, never refused by any cap.
      const signIn = await visitor('203.0.113.9').submit('/login', { email: developer, password: PASSWORD });
      expect(signIn).toMatchObject({ status: 303, location: '/dashboard' });

      expect(await portalConsumers()).toHaveLength(FLOOD + 1);
      const alarms = warn.mock.calls.filter(([line]) => JSON.stringify(line).includes('portal.consumer-cap.alarm'));
      expect(alarms).toHaveLength(1);
      expect(alarms[0][0]).toMatchObject({ event: 'portal.consumer-cap.alarm', consumersPerHour: FLEET_ALARM });
      // The same for a scraper: keys created and deferred, the fleet's figure this hour, one alarm.
      const port = stack.portal.app.get(AppMetrics).port!;
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).toMatch(
        new RegExp(`^portal_new_keys_total\\{outcome="created",app="portal"\\} ${FLOOD + 1}$`, 'm'),
      );
      expect(metrics).toMatch(/^portal_new_keys_total\{outcome="deferred",app="portal"\} 1$/m);
      expect(metrics).toMatch(new RegExp(`^portal_consumers_created_fleet_hour\\{app="portal"\\} ${FLOOD + 1}$`, 'm'));
      expect(metrics).toMatch(/^portal_consumer_cap_alarms_total\{app="portal"\} 1$/m);
    } finally {
      warn.mockRestore();
    }
  });

  it('signs in a developer whose block is spent (never 429), says when the key comes, and gives it then', async () => {
    const shared = '2001:db8:beef:1::';
    // Someone on the developer's own /64 took the block's key of this hour.
    expect((await verify(await signUp(newEmail('neighbour'), `${shared}1`), visitor(`${shared}1`))).status).toBe(200);
    const developer = newEmail('late');
    const link = await signUp(developer, `${shared}2`);
    const browser = visitor(`${shared}2`);
    const verified = await verify(link, browser);
    expect(verified.status).toBe(200);
    const comesAt = /data-testid="key-comes-at">([^<]+)</.exec(verified.text)?.[1];
    expect(comesAt).toBeDefined();

    // Sign-in is never refused for want of a key: signed in, on the page that says when.
    const later = visitor(`${shared}3`);
    const signIn = await later.submitAndFollow('/login', { email: developer, password: PASSWORD });
    expect(signIn.posted).toMatchObject({ status: 303, location: '/key' });
    expect(signIn.status).toBe(200);
    expect(signIn.text).toContain('Your API key is on its way');
    expect(signIn.text).toContain(`data-testid="key-comes-at">${comesAt}<`);
    // The dashboard leads to that page; asking before the time says the same.
    expect(await later.get('/dashboard')).toMatchObject({ status: 303, location: '/key' });
    const early = await later.submitAndFollow('/key', {});
    expect(early.posted).toMatchObject({ status: 303, location: '/key' });
    expect(early.status).toBe(200);
    expect(early.text).toContain(`data-testid="key-comes-at">${comesAt}<`);

    // The time the page said comes: the block's hour ends (its row's end moved to now, the clock being PostgreSQL's).
    await stack.portal.app
      .get(DataSource)
      .query(`UPDATE "portal"."throttle" SET "expires_at" = now() WHERE "key" = $1`, [
        `consumers-created:2001:db8:beef:1::/64`,
      ]);
    expect((await later.get('/key')).text).toContain('Your key can be made now');
    const claimed = await later.submitAndFollow('/key', {});
    expect(claimed.posted).toMatchObject({ status: 303, location: '/keys/new' });
    expect(claimed.status).toBe(200);
    expect(claimed.text).toContain('data-testid="new-key"');
    expect((await later.get('/dashboard')).status).toBe(200);
  });
});
