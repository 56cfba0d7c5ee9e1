import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { ConsumersModule } from '../consumers/consumers.module';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { HealthController } from './health.controller';

// Terminus would log every failed probe; the controller logs each outage once instead.
@Module({
  imports: [TerminusModule.forRoot({ logger: false }), RateLimitModule, ConsumersModule],
  controllers: [HealthController],
})
export class HealthModule {}
