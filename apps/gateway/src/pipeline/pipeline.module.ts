import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { RoutingModule } from '../routing/routing.module';
import { UsageModule } from '../usage/usage.module';
import { ApiPipeline } from './api-pipeline';

/** The one way into /v1 (ApiPipeline): route, authenticate, decide the limits once, answer, record. */
@Module({
  imports: [RoutingModule, AuthModule, RateLimitModule, UsageModule],
  providers: [ApiPipeline],
  exports: [ApiPipeline],
})
export class PipelineModule {}
