import { ContractValidationPipe } from '@app/contract';
import { AppMetrics } from '@app/platform';
import { DatabasePoolMetrics } from './database/database-pool.metrics';
import { DynamicModule, Module } from '@nestjs/common';
import { APP_PIPE } from '@nestjs/core';
import { PetsConfig } from './config/pets.config';
import { DatabaseModule } from './database/database.module';
import { HealthModule } from './health/health.module';
import { PetsModule } from './pets/pets.module';

@Module({})
export class PetsAppModule {
  static forRoot(config: PetsConfig, metrics: AppMetrics): DynamicModule {
    return {
      module: PetsAppModule,
      global: true,
      imports: [DatabaseModule.forRoot(config), PetsModule, HealthModule],
      providers: [
        { provide: APP_PIPE, useClass: ContractValidationPipe },
        { provide: AppMetrics, useValue: metrics },
        DatabasePoolMetrics,
      ],
      exports: [AppMetrics],
    };
  }
}
