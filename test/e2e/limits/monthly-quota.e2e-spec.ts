import { randomBytes } from 'node:crypto';
import { adminCall, mintKey, plans, startGateway } from '../../support/gateway';
import { call, expectErrorBody, Reply } from '../../support/http';
import { withStack } from '../../support/with-stack';

const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
const shared = Boolean(process.env.REDIS_URL);

interface Billing {
  consumer: string;
  billingAnchor: string;
  anchorSet: boolean;
  ownPerMonth: number | null;
  perMonth: number | null;
  currentPeriod: { start: string; end: string };
}
interface Usage {
  windows: Array<{ name: string; limit: number; used: number; remaining: number; resetSeconds: number }>;
}

/**
 * Monthly quotas on a billing anchor (issue #38): set through the admin API (audited), decided in the same store
 * call as the minute and day windows, on the engine the run selects. With REDIS_URL the burst goes straight at two
 * instances sharing Redis; without, at one (each instance then has counters of its own).
 */
describe('monthly quotas', () => {
  // Refusals are not strikes for a minute: a burst that outlasts the 5 s grace on a loaded machine is not banned.
  const env = { BAN_GRACE_MS: '60000' };
  const stack = withStack({ pets: {}, database: true, sharedKeyPrefix: 'month', gateways: { a: { env }, b: { env } } });

  beforeAll(() => {
    if (!shared)
      console.log('monthly-quota: REDIS_URL is not set: the burst goes at one instance (no shared counters)');
  });

  const usageOf = async (name: string) => (await adminCall(stack.a, 'GET', `/consumers/${name}/usage`)).body as Usage;
  const windowOf = (usage: Usage, name: string) => usage.windows.find((w) => w.name === name);

  it('keeps today’s behaviour for plans without perMonth: no month window, no month policy', async () => {
    const name = unique('free');
    const key = await mintKey(stack.a, 'free', name);
    const reply = await call(`${stack.a.url}/v1/pets?limit=1`, as(key));
    expect(reply.status).toBe(200);
    expect(reply.headers.get('ratelimit-policy')).not.toContain('"month"');
    expect(windowOf(await usageOf(name), 'month')).toBeUndefined();
    const billing = (await adminCall(stack.a, 'GET', `/consumers/${name}/billing`)).body as Billing;
    expect(billing).toMatchObject({ consumer: name, anchorSet: false, ownPerMonth: null, perMonth: null });
  });

  it('admits exactly the monthly quota of a burst straight at the instances; refusals consume from no window', async () => {
    const name = unique('ent');
    const key = await mintKey(stack.a, 'enterprise', name, { perMinute: 1_000_000, perDay: 100_000_000 });
    const set = await adminCall(stack.a, 'PATCH', `/consumers/${name}/billing`, { perMonth: 40 });
    expect(set.status).toBe(200);
    expect((set.body as Billing).perMonth).toBe(40);

    const targets = shared ? [stack.a, stack.b] : [stack.a];
    const replies: Reply[] = await Promise.all(
      Array.from({ length: 300 }, (_, i) => call(`${targets[i % targets.length].url}/v1/pets?limit=1`, as(key))),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(40);
    const refused = replies.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(260);
    for (const reply of refused) expectErrorBody(reply, 429, 'RATE_LIMITED');
    expect((refused[0].body as { message: string }).message).toContain('month');

    // 40 in every window: the 260 refusals counted nowhere.
    const usage = await usageOf(name);
    expect(windowOf(usage, 'minute')?.used).toBe(40);
    expect(windowOf(usage, 'day')?.used).toBe(40);
    expect(windowOf(usage, 'month')).toMatchObject({ limit: 40, used: 40, remaining: 0 });
    // Retry-After is the period's end, which the billing read names.
    const billing = (await adminCall(stack.a, 'GET', `/consumers/${name}/billing`)).body as Billing;
    const untilEnd = (Date.parse(billing.currentPeriod.end) - Date.now()) / 1000;
    const retryAfter = Number(refused[0].headers.get('retry-after'));
    expect(Math.abs(retryAfter - untilEnd)).toBeLessThan(60);

    // Every policy in force, the month's w its period in seconds; RateLimit names the violated one.
    const periodSeconds = (Date.parse(billing.currentPeriod.end) - Date.parse(billing.currentPeriod.start)) / 1000;
    expect(refused[0].headers.get('ratelimit-policy')).toBe(
      `"minute";q=1000000;w=60, "day";q=100000000;w=86400, "month";q=40;w=${periodSeconds}`,
    );
    expect(refused[0].headers.get('ratelimit')).toBe(`"month";r=0;t=${retryAfter}`);
    expect(refused[0].headers.get('x-ratelimit-limit')).toBe('40');
    expect(refused[0].headers.get('x-ratelimit-remaining')).toBe('0');
    // An admitted request reports the policy nearest exhaustion: the month (at most 39 left against a million).
    const admitted = replies.find((r) => r.status === 200)!;
    expect(admitted.headers.get('ratelimit')).toMatch(/^"month";r=\d+;t=\d+$/);
    expect(admitted.headers.get('x-ratelimit-limit')).toBe('40');
  });

  it('a refusal by the minute window counts nothing in the month', async () => {
    const name = unique('tight');
    const key = await mintKey(stack.a, 'enterprise', name, { perMinute: 3, perDay: 1000 });
    await adminCall(stack.a, 'PATCH', `/consumers/${name}/billing`, { perMonth: 100 });
    const replies = await Promise.all(
      Array.from({ length: 20 }, () => call(`${stack.a.url}/v1/pets?limit=1`, as(key))),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(3);
    expect(windowOf(await usageOf(name), 'month')?.used).toBe(3);
  });

  it('moves the anchor (audited) without resetting the count: the period in progress is re-cut', async () => {
    const name = unique('anchor');
    const key = await mintKey(stack.a, 'enterprise', name, { perMinute: 1000, perDay: 1000 });
    await adminCall(stack.a, 'PATCH', `/consumers/${name}/billing`, { perMonth: 10 });
    for (let i = 0; i < 4; i += 1) expect((await call(`${stack.a.url}/v1/pets?limit=1`, as(key))).status).toBe(200);

    // An anchor three days from now (any year: it is a day of month and a time of day).
    const anchor = new Date(Date.now() + 3 * 86_400_000 - 2 * 365 * 86_400_000);
    anchor.setUTCMilliseconds(0);
    const moved = await adminCall(stack.a, 'PATCH', `/consumers/${name}/billing`, {
      billingAnchor: anchor.toISOString(),
    });
    expect(moved.status).toBe(200);
    const billing = moved.body as Billing;
    expect(billing).toMatchObject({ anchorSet: true, billingAnchor: anchor.toISOString(), perMonth: 10 });
    const end = Date.parse(billing.currentPeriod.end);
    expect(Math.abs(end - (Date.now() + 3 * 86_400_000))).toBeLessThan(2 * 86_400_000);

    // The count carries on (on the other instance when they share counters), and the window now ends at the new
    // anchor's reset.
    const reply = await call(`${(shared ? stack.b : stack.a).url}/v1/pets?limit=1`, as(key));
    expect(reply.status).toBe(200);
    const usage = windowOf(await usageOf(name), 'month')!;
    expect(usage.used).toBe(5);
    expect(Math.abs(usage.resetSeconds - (end - Date.now()) / 1000)).toBeLessThan(60);

    const audit = await adminCall(stack.a, 'GET', `/audit?limit=10&action=consumer.billing&target=${name}`);
    const rows = (audit.body as { items: Array<{ action: string; changes: Record<string, unknown> }> }).items;
    expect(rows.map((r) => r.action)).toEqual(['consumer.billing', 'consumer.billing']);
    // With its effect: the period in progress keeps its start and now ends at the new anchor's reset.
    expect(rows[1].changes).toEqual({
      billingAnchor: { before: null, after: anchor.toISOString() },
      billingPeriod: {
        before: { start: billing.currentPeriod.start, end: expect.any(String) },
        after: billing.currentPeriod,
      },
    });
  });

  it('refuses bad billing input with a clear 400, an unknown consumer with 404', async () => {
    const name = unique('bad');
    await mintKey(stack.a, 'free', name);
    const cases: Array<[unknown, string]> = [
      [{}, 'Give billingAnchor, perMonth, creditRefill, costs or alerts.'],
      [{ billingAnchor: 'tomorrow' }, 'billingAnchor must be an ISO 8601 date-time'],
      [{ perMonth: 0 }, 'perMonth must be at least 1'],
      [{ perMonth: 1.5 }, 'perMonth must be an integer'],
      [{ perMonth: 3_000_000_000 }, 'perMonth must be at most 2000000000'],
    ];
    for (const [body, message] of cases) {
      const reply = await adminCall(stack.a, 'PATCH', `/consumers/${name}/billing`, body);
      expectErrorBody(reply, 400, 'VALIDATION_FAILED');
      expect((reply.body as { message: string }).message).toBe(message);
    }
    expectErrorBody(
      await adminCall(stack.a, 'PATCH', '/consumers/nobody-here/billing', { perMonth: 5 }),
      404,
      'NOT_FOUND',
    );
    // null clears: back to the plan's (none) and the creation time.
    await adminCall(stack.a, 'PATCH', `/consumers/${name}/billing`, {
      perMonth: 5,
      billingAnchor: '2026-01-31T00:00:00Z',
    });
    const cleared = await adminCall(stack.a, 'PATCH', `/consumers/${name}/billing`, {
      perMonth: null,
      billingAnchor: null,
    });
    expect(cleared.body).toMatchObject({ anchorSet: false, ownPerMonth: null, perMonth: null });
  });

  it('a plan’s perMonth in the plan table applies to its consumers; their own quota replaces it', async () => {
    const gateway = await startGateway({
      petsUrl: stack.pets.url,
      database: stack.database,
      plans: { ...plans, pro: { perMinute: 300, perDay: 10_000, perMonth: 7 } },
    });
    try {
      const name = unique('pro');
      const key = await mintKey(gateway, 'pro', name);
      const replies: Reply[] = [];
      for (let i = 0; i < 9; i += 1) replies.push(await call(`${gateway.url}/v1/pets?limit=1`, as(key)));
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 429, 429]);
      expect(replies[0].headers.get('ratelimit-policy')).toContain('"month";q=7;w=');
      const own = await adminCall(gateway, 'PATCH', `/consumers/${name}/billing`, { perMonth: 9 });
      expect(own.body).toMatchObject({ ownPerMonth: 9, perMonth: 9 });
    } finally {
      await gateway.close();
    }
  });
});
