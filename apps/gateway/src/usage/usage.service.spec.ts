import { AppMetrics } from '@app/platform';
import { Registry } from 'prom-client';
import { Clock } from '../clock';
import { GatewayConfig } from '../config/gateway.config';
import { UsageRepository } from './usage.repository';
import { UsageService } from './usage.service';

describe('UsageService retention schedule', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  function start(): { service: UsageService; prune: jest.Mock } {
    const prune = jest.fn().mockResolvedValue(0);
    const config = {
      usage: { enabled: true, maxBuckets: 100, flushMs: 5_000, retentionDays: 400 },
    } as unknown as GatewayConfig;
    const clock = { now: () => Date.now(), monotonic: () => 0 } as Clock;
    const service = new UsageService({ prune } as unknown as UsageRepository, clock, config, {
      registry: new Registry(),
    } as AppMetrics);
    service.onApplicationBootstrap();
    return { service, prune };
  }

  it('prunes once within a minute of start (an instance redeployed hourly still prunes), then every hour', async () => {
    const { service, prune } = start();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(prune).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(3_600_000);
    expect(prune).toHaveBeenCalledTimes(2);
    await service.onApplicationShutdown();
  });

  it('runs no prune once shut down before the first one', async () => {
    const { service, prune } = start();
    await service.onApplicationShutdown();
    await jest.advanceTimersByTimeAsync(2 * 3_600_000);
    expect(prune).not.toHaveBeenCalled();
  });
});
