import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AfterAnswer } from '../../../apps/portal/src/accounts/after-answer';
import { ConsoleClient, ConsoleUnderTest, startConsole } from '../../support/console';
import { adminCall } from '../../support/gateway';
import { call } from '../../support/http';
import { PortalStack, startPortalStack } from '../../support/portal';
import { linkIn, PortalVisitor } from '../../support/portal-visitor';

const PASSWORD = 'a long enough passphrase';
const DAY_MS = 86_400_000;

interface Ledger {
  balance: number | null;
  projectedExhaustionAt: string | null;
  exhaustion: string;
}

/** The keys CLI's "projected exhaustion" line for the consumer. */
async function cliExhaustion(gateway: PortalStack['gateway'], consumer: string): Promise<string | undefined> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(__dirname, '../../../scripts/keys.js'), 'credits', consumer],
    { env: { ...process.env, ADMIN_URL: gateway.adminUrl, ADMIN_TOKEN: gateway.adminToken } },
  );
  return /^projected exhaustion\t(.*)$/m.exec(stdout)?.[1];
}

/** The "Runs out" value of the credits panel (portal dashboard, console consumer page), tags and all. */
const runsOut = (html: string) => /data-testid="credits-exhaustion">(.*?)<\/dd>/.exec(html)?.[1];

/**
 * A balance spent down to 0 has run out: the ledger says `exhausted` (no projected date, which would be the moment
 * of the answer), and the portal and the console say "exhausted until <the next refill>", or "exhausted" when no
 * refill is scheduled, beside "0 credits left".
 */
describe('credits at zero', () => {
  let stack: PortalStack;
  let operatorConsole: ConsoleUnderTest;
  let operator: ConsoleClient;
  let developer: PortalVisitor;
  let consumer: string;

  beforeAll(async () => {
    stack = await startPortalStack({ gatewayEnv: { USAGE_FLUSH_MS: '100', BAN_GRACE_MS: '60000' } });
    operatorConsole = await startConsole(stack.gateway.adminUrl);
    operator = new ConsoleClient(operatorConsole.url);
    expect((await operator.signIn(stack.gateway.adminToken)).status).toBe(303);

    const email = `zero-${Date.now()}@example.com`;
    developer = new PortalVisitor(stack.portal.url);
    expect((await developer.submit('/signup', { email, password: PASSWORD })).status).toBe(200);
    await stack.portal.app.get(AfterAnswer).drain();
    const token = linkIn((await stack.smtp.next(email, /Verify/)).text, '/verify');
    expect((await developer.submit(`/verify?token=${token}`, { token, password: PASSWORD }, '/verify')).status).toBe(
      303,
    );
    const found = await adminCall(stack.gateway, 'GET', `/consumers?email=${encodeURIComponent(email)}`);
    consumer = (found.body as { items: Array<{ name: string }> }).items[0].name;

    // 10 credits and a daily refill of 1: the spend of today (10) is far above what the refill gives back, so the
    // projection from the last 7 days' spend is a date, which at 0 credits would be "now".
    const billing = await adminCall(stack.gateway, 'PATCH', `/consumers/${consumer}/billing`, {
      creditRefill: { amount: 1, every: 'day' },
    });
    expect(billing.status).toBe(200);
    const set = await adminCall(stack.gateway, 'PUT', `/consumers/${consumer}/credits`, {
      balance: 10,
      reason: 'trial',
    });
    expect(set.status).toBe(200);
    const key = await adminCall(stack.gateway, 'POST', `/consumers/${consumer}/keys`, {});
    const secret = (key.body as { key: string }).key;
    const statuses: number[] = [];
    for (let i = 0; i < 11; i += 1)
      statuses.push(
        (await call(`${stack.gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${secret}` } })).status,
      );
    // The 11th waits for the refill (it covers one request): 429, not 402.
    expect(statuses).toEqual([...Array<number>(10).fill(200), 429]);
  }, 180_000);

  afterAll(async () => {
    await operatorConsole?.close();
    await stack?.close();
  });

  it('answers exhaustion "exhausted" and no projected date in the ledger', async () => {
    const ledger = (await adminCall(stack.gateway, 'GET', `/consumers/${consumer}/credits/ledger?days=30`))
      .body as Ledger;
    expect(ledger).toMatchObject({ balance: 0, projectedExhaustionAt: null, exhaustion: 'exhausted' });
  });

  it('shows "exhausted until <the next refill>" on the dashboard and the consumer page', async () => {
    const credits = (await adminCall(stack.gateway, 'GET', `/consumers/${consumer}/billing`)).body as {
      credits: { balance: number; nextRefillAt: string };
    };
    expect(credits.credits.balance).toBe(0);
    const next = credits.credits.nextRefillAt;
    // The next UTC midnight: the daily refill's instant.
    expect(Date.parse(next) % DAY_MS).toBe(0);
    const shown = `exhausted until <time datetime="${next}">${next.slice(0, 10)} 00:00 UTC</time>`;
    const dashboard = await developer.get('/dashboard');
    expect(dashboard.status).toBe(200);
    expect(runsOut(dashboard.text)).toBe(shown);
    expect(dashboard.text).toContain('<span data-testid="credits-remaining">0</span> credits left');
    const page = await operator.request('GET', `/consumers/${consumer}`);
    expect(page.status).toBe(200);
    expect(runsOut(page.text)).toBe(shown);
    expect(await cliExhaustion(stack.gateway, consumer)).toBe(`exhausted until ${next}`);
  });

  it('shows "exhausted" alone once no refill is scheduled', async () => {
    const billing = await adminCall(stack.gateway, 'PATCH', `/consumers/${consumer}/billing`, { creditRefill: null });
    expect(billing.status).toBe(200);
    expect(((billing.body as { credits: { nextRefillAt: string | null } }).credits ?? {}).nextRefillAt).toBeNull();
    expect(runsOut((await developer.get('/dashboard')).text)).toBe('exhausted');
    expect(runsOut((await operator.request('GET', `/consumers/${consumer}`)).text)).toBe('exhausted');
    expect(await cliExhaustion(stack.gateway, consumer)).toBe('exhausted (only a top-up adds credits)');
  });
});
