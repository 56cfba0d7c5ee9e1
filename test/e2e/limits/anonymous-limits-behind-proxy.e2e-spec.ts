import { AppMetrics } from '@app/platform';
import Redis from 'ioredis';
import { ForwardingProxy, startForwardingProxy } from '../../support/forwarding-proxy';
import { call, expectErrorBody, Reply } from '../../support/http';
import { runIf } from '../../support/skip';
import { withStack } from '../../support/with-stack';

const ANON_LIMIT = 30;
const keyless = (url: string, forwardedFor: string) =>
  call(`${url}/v1/pets`, { headers: { 'x-forwarded-for': forwardedFor } });
const statuses = (replies: Reply[]) => replies.map((r) => r.status);

/**
 * The anonymous limit behind a balancer (TRUST_PROXY=1): a client cannot choose the address it is counted
 * under, and a flood of addresses cannot grow the in-process counters without bound. On in-process counters
 * or, with REDIS_URL set, on Redis.
 */
describe('anonymous limits behind a trusted proxy', () => {
  let proxy: ForwardingProxy;
  // Before withStack: afterAll hooks run in declaration order, and the proxy closes before the gateway.
  afterAll(async () => {
    await proxy?.close();
  });
  const stack = withStack({
    pets: {},
    gateway: {
      env: { TRUST_PROXY: '1', ANON_RATE_LIMIT_PER_MINUTE: String(ANON_LIMIT), RATE_LIMIT_MEMORY_MAX_TRACKERS: '100' },
    },
  });

  beforeAll(async () => {
    proxy = await startForwardingProxy(stack.gateway.url);
  });

  it('counts 60 keyless requests with 60 invented X-Forwarded-For values as one client: 429 once the limit is reached', async () => {
    const replies: Reply[] = [];
    for (let i = 0; i < 60; i += 1) replies.push(await keyless(proxy.url, `198.51.100.${i}`));
    expect(statuses(replies.slice(0, ANON_LIMIT))).toEqual(Array(ANON_LIMIT).fill(401));
    for (const reply of replies.slice(ANON_LIMIT)) expectErrorBody(reply, 429);
    expect(replies[ANON_LIMIT - 1].headers.get('x-ratelimit-remaining')).toBe('0');
  });

  it('believes only the entry the proxy appended: a direct peer at a trusted position is counted by it', async () => {
    // Talking to the gateway directly, the test is "the proxy": the last entry is what counts, nothing before it.
    const first = await keyless(stack.gateway.url, '192.0.2.1, 203.0.113.10');
    const again = await keyless(stack.gateway.url, '192.0.2.2, 203.0.113.10');
    expect([first.status, again.status]).toEqual([401, 401]);
    expect(Number(again.headers.get('x-ratelimit-remaining'))).toBe(
      Number(first.headers.get('x-ratelimit-remaining')) - 1,
    );
    const other = await keyless(stack.gateway.url, '203.0.113.11');
    expect(other.headers.get('x-ratelimit-remaining')).toBe(String(ANON_LIMIT - 1));
  });

  it('counts garbage X-Forwarded-For values against the socket address, not as addresses of their own', async () => {
    const replies: Reply[] = [];
    for (let i = 0; i < ANON_LIMIT + 5; i += 1)
      replies.push(await keyless(stack.gateway.url, i % 2 ? `not-an-ip-${i}` : `${'x'.repeat(4000)}${i}`));
    // The first test spent 127.0.0.1's quota through the proxy: every garbage request lands on that same tracker.
    for (const reply of replies) expectErrorBody(reply, 429);
  });

  it('keeps the in-process counters within RATE_LIMIT_MEMORY_MAX_TRACKERS under a flood of real addresses', async () => {
    const metricsUrl = `http://127.0.0.1:${stack.gateway.app.get(AppMetrics).port}/metrics`;
    const trackers = async () => {
      const text = await (await fetch(metricsUrl)).text();
      return Number(/^rate_limit_memory_trackers\{[^}]*\} (\d+)$/m.exec(text)?.[1]);
    };
    let largest = 0;
    for (let batch = 0; batch < 10; batch += 1) {
      await Promise.all(Array.from({ length: 50 }, (_, i) => keyless(stack.gateway.url, `10.7.${batch}.${i}`)));
      largest = Math.max(largest, await trackers());
    }
    expect(largest).toBe(100);
  });

  // Only with REDIS_URL: the embedded run has no Redis keys (its in-process bound is the test above).
  const ifRedis = runIf(process.env.REDIS_URL, 'REDIS_URL (a Redis server)');
  ifRedis.it('with Redis, stores anonymous trackers under short key names, whatever the header sent', async () => {
    const { keyPrefix } = stack.gateway.config.redis!;
    const redis = new Redis(process.env.REDIS_URL!);
    try {
      const names = await redis.keys(`${keyPrefix}rl:{anonymous:*`);
      expect(names.length).toBeGreaterThan(500);
      const longest = Math.max(...names.map((name) => name.length - keyPrefix.length));
      expect(longest).toBeLessThanOrEqual('rl:{anonymous:255.255.255.255}:strikes'.length);
    } finally {
      redis.disconnect();
    }
  });
});
