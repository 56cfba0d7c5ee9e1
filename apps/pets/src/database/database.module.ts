import { DynamicModule, Global, Inject, Injectable, Module, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { PETS_CONFIG, PetsConfig } from '../config/pets.config';
import { dataSourceOptions } from './data-source.options';
import { runMigrations } from './run-migrations';
import {
  DatabaseEndpoint,
  EmbeddedPgliteEndpoint,
  ExternalPostgresEndpoint,
  guardPoolClients,
  pendingMigrations,
} from '@app/database';
import { ConfigurationError } from '@app/platform';

export async function openDatabaseEndpoint(config: PetsConfig): Promise<DatabaseEndpoint> {
  return config.databaseUrl
    ? new ExternalPostgresEndpoint(config.databaseUrl, config.poolSize)
    : EmbeddedPgliteEndpoint.start({
        dataDir: config.pgliteDataDir,
        // PGlite's own socket server runs one session: one connection, or transactions would interleave.
        maxPoolSize: 1,
        logContext: 'Database',
        logMessage: `Embedded PGlite database in ${config.pgliteDataDir}`,
      });
}

@Global()
@Module({})
class DatabaseEndpointModule {
  static forRoot(config: PetsConfig): DynamicModule {
    return {
      module: DatabaseEndpointModule,
      providers: [
        { provide: PETS_CONFIG, useValue: config },
        { provide: DatabaseEndpoint, useFactory: () => openDatabaseEndpoint(config) },
      ],
      exports: [PETS_CONFIG, DatabaseEndpoint],
    };
  }
}

/** Migrates before the service takes requests (when configured), and closes the endpoint after the pool. */
@Injectable()
class DatabaseLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly dataSource: DataSource,
    private readonly endpoint: DatabaseEndpoint,
    @Inject(PETS_CONFIG) private readonly config: PetsConfig,
  ) {}

  /**
   * Never ready-and-broken: a schema behind the code would answer 500 to every request while /health/ready said
   * 200, so the service refuses to start and says what to do.
   */
  async onModuleInit(): Promise<void> {
    guardPoolClients(this.dataSource);
    if (this.config.migrateOnStart) {
      await runMigrations(this.dataSource, this.endpoint);
      return;
    }
    const pending = await pendingMigrations(this.dataSource);
    if (pending.length > 0) {
      throw new ConfigurationError(
        `pending migrations (${pending.join(', ')}): run npm run migrate, or set DB_MIGRATE_ON_START=true`,
      );
    }
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
    await this.endpoint.close();
  }
}

@Module({})
export class DatabaseModule {
  static forRoot(config: PetsConfig): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        DatabaseEndpointModule.forRoot(config),
        TypeOrmModule.forRootAsync({
          inject: [DatabaseEndpoint],
          useFactory: (endpoint: DatabaseEndpoint) => dataSourceOptions(endpoint, config.poolSize),
        }),
      ],
      providers: [DatabaseLifecycle],
    };
  }
}
