import { DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { RateLimitStore } from '../../rate-limit/rate-limit-store';
import { RateLimiter } from '../../rate-limit/rate-limiter.service';
import { ConsumerStore } from '../consumer-store.service';
import { ADMIN_TOKEN, AdminTokenGuard } from './admin-token.guard';
import { ConsumerUsageService } from './consumer-usage.service';
import { ConsumersAdminController } from './consumers-admin.controller';
import { DatabaseUnavailableInterceptor } from './database-unavailable.interceptor';

/** What the admin app takes from the gateway it runs beside (the same instances: one cache, one pool). */
export interface AdminDependencies {
  token: string;
  store: ConsumerStore;
  limiter: RateLimiter;
  counters: RateLimitStore;
}

@Module({})
export class AdminModule {
  static forRoot(dependencies: AdminDependencies): DynamicModule {
    return {
      module: AdminModule,
      controllers: [ConsumersAdminController],
      providers: [
        { provide: ADMIN_TOKEN, useValue: dependencies.token },
        { provide: ConsumerStore, useValue: dependencies.store },
        { provide: RateLimiter, useValue: dependencies.limiter },
        { provide: RateLimitStore, useValue: dependencies.counters },
        ConsumerUsageService,
        { provide: APP_GUARD, useClass: AdminTokenGuard },
        { provide: APP_INTERCEPTOR, useClass: DatabaseUnavailableInterceptor },
      ],
    };
  }
}
