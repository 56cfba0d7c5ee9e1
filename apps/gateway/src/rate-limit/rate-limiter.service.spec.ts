import { SystemClock } from '../clock';
import { loadGatewayConfig } from '../config/gateway.config';
import { MemoryRateLimitStore } from './memory-rate-limit.store';
import { AppMetrics } from '@app/platform';
import { RateLimitMetrics } from './rate-limit-metrics';
import { RateLimiter } from './rate-limiter.service';
import { ClientAddressResolver } from './client-address';

describe('RateLimiter limit resolution', () => {
  const config = loadGatewayConfig({ ANON_RATE_LIMIT_PER_MINUTE: '7' });
  const clock = new SystemClock();
  const store = new MemoryRateLimitStore(clock);
  const limiter = new RateLimiter(store, clock, new RateLimitMetrics(new AppMetrics('test')), config, ClientAddressResolver.fromSetting(1));
  afterAll(() => store.close());

  it('counts a consumer by name in a minute and a day window with its own limits', () => {
    expect(limiter.forConsumer({ name: 'acme', plan: 'enterprise', limits: { perMinute: 5000, perDay: 2_000_000 } })).toEqual({
      tracker: 'consumer:acme',
      name: 'acme',
      plan: 'enterprise',
      windows: [
        { name: 'minute', limit: 5000, ttlMs: 60_000 },
        { name: 'day', limit: 2_000_000, ttlMs: 86_400_000 },
      ],
    });
  });

  it('counts clients without a valid key by address, per minute, at the anonymous limit', () => {
    const request = { socket: { remoteAddress: '10.9.9.9' }, headers: { 'x-forwarded-for': '10.0.0.1' } } as never;
    expect(limiter.forAnonymous(request)).toMatchObject({
      tracker: 'anonymous:10.0.0.1',
      plan: 'anonymous',
      windows: [{ name: 'minute', limit: 7, ttlMs: 60_000 }],
    });
  });
});
