import { Module, OnModuleInit } from '@nestjs/common';
import { ConsumerChanges } from './consumers/consumer-changes';
import { ConsumersModule } from './consumers/consumers.module';
import { consumerTracker } from './rate-limit/plan-throttlers';
import { RateLimitModule } from './rate-limit/rate-limit.module';
import { RateLimitStore } from './rate-limit/rate-limit-store';

/**
 * Every instance forgets the bans and strikes the admin API lifted (`POST /consumers/{name}/unban` on any
 * instance), in what it holds itself: its in-process counters, or its memory of Redis's (the fallback). The
 * instance that lifted a ban hears its own change too. Apart from RateLimitModule, which needs no database.
 * It wires one room to another, so it sits in the composition root, above both: consumers (whose admin/ lifts the
 * ban in the rate-limit store) stand above rate-limit, so rate-limit cannot listen to their channel itself.
 */
@Module({ imports: [ConsumersModule, RateLimitModule] })
export class UnbanPropagationModule implements OnModuleInit {
  constructor(
    private readonly changes: ConsumerChanges,
    private readonly store: RateLimitStore,
  ) {}

  onModuleInit(): void {
    this.changes.onChange((change) => {
      for (const name of change.unbanned ?? []) this.store.forgetBan(consumerTracker(name));
    });
  }
}
