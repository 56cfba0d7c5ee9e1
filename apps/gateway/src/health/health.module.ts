import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { KeysModule } from '../keys/keys.module';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { HealthController } from './health.controller';

// Terminus would log every failed probe; the controller logs each outage once instead.
@Module({
  imports: [TerminusModule.forRoot({ logger: false }), RateLimitModule, KeysModule],
  controllers: [HealthController],
})
export class HealthModule {}
