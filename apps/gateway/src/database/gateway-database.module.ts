import {
  DatabaseEndpoint,
  EmbeddedPgliteEndpoint,
  ExternalPostgresEndpoint,
  guardPoolClients,
  PgliteListener,
  PgliteWireServer,
} from '@app/database';
import { Inject, Injectable, Module, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { InjectDataSource, TypeOrmModule } from '@nestjs/typeorm';
import type { PGlite } from '@electric-sql/pglite';
import { DataSource } from 'typeorm';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { dataSourceOptions, GATEWAY_DATA_SOURCE } from './data-source.options';
import { runMigrations } from './run-migrations';

export async function openDatabaseEndpoint(config: GatewayConfig): Promise<DatabaseEndpoint> {
  const { databaseUrl, poolSize, pgliteDataDir } = config.consumers;
  if (databaseUrl) return new ExternalPostgresEndpoint(databaseUrl, poolSize);
  return EmbeddedPgliteEndpoint.start({
    dataDir: pgliteDataDir,
    // PgliteWireServer makes several connections safe on PGlite's single session.
    maxPoolSize: 2,
    serve: servePgliteWire,
    logContext: 'Consumers',
    logMessage: `Embedded PGlite database for consumers and keys in ${pgliteDataDir}`,
  });
}

async function servePgliteWire(db: PGlite): Promise<PgliteListener> {
  const server = new PgliteWireServer(db);
  const address = await server.listen(0, '127.0.0.1');
  return { address, close: () => server.close() };
}

@Module({
  providers: [{ provide: DatabaseEndpoint, inject: [GATEWAY_CONFIG], useFactory: openDatabaseEndpoint }],
  exports: [DatabaseEndpoint],
})
class DatabaseEndpointModule {}

/**
 * Migrates before any module's start-up touches a table (this module is imported by every room, so Nest runs its
 * hooks first), and closes the pool and the endpoint last, after every importer has stopped.
 */
@Injectable()
class GatewayDatabaseLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource,
    private readonly endpoint: DatabaseEndpoint,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    guardPoolClients(this.dataSource);
    if (this.config.consumers.migrateOnStart)
      await runMigrations(this.dataSource, this.endpoint, this.config.consumers.schema);
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
    await this.endpoint.close();
  }
}

/**
 * The gateway's own database (consumers, keys, access, plan requests, usage): PostgreSQL at GATEWAY_DATABASE_URL,
 * else an embedded PGlite. Each room brings its entities with TypeOrmModule.forFeature(entities, GATEWAY_DATA_SOURCE).
 */
@Module({
  imports: [
    DatabaseEndpointModule,
    TypeOrmModule.forRootAsync({
      name: GATEWAY_DATA_SOURCE,
      imports: [DatabaseEndpointModule],
      inject: [DatabaseEndpoint, GATEWAY_CONFIG],
      useFactory: (endpoint: DatabaseEndpoint, config: GatewayConfig) => ({
        ...dataSourceOptions(endpoint, config.consumers.poolSize, config.consumers.schema, []),
        // Every room's entities join through TypeOrmModule.forFeature(entities, GATEWAY_DATA_SOURCE).
        autoLoadEntities: true,
        // A gateway whose database is missing at start fails soon, with the reason, rather than after 30 s.
        retryAttempts: 2,
        retryDelay: 1000,
      }),
    }),
  ],
  providers: [GatewayDatabaseLifecycle],
  exports: [DatabaseEndpointModule, TypeOrmModule],
})
export class GatewayDatabaseModule {}
