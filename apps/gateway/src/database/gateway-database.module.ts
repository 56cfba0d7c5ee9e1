import {
  DatabaseEndpoint,
  EmbeddedPgliteEndpoint,
  ExternalPostgresEndpoint,
  PgliteListener,
  PgliteWireServer,
} from '@app/database';
import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { PGlite } from '@electric-sql/pglite';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { dataSourceOptions, GATEWAY_DATA_SOURCE } from './data-source.options';

type Entities = Parameters<typeof dataSourceOptions>[3];

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

/** The gateway's own database (consumers and keys): PostgreSQL at GATEWAY_DATABASE_URL, else an embedded PGlite. */
@Module({})
export class GatewayDatabaseModule {
  static forRoot(entities: Entities): DynamicModule {
    return {
      module: GatewayDatabaseModule,
      imports: [
        DatabaseEndpointModule,
        TypeOrmModule.forRootAsync({
          name: GATEWAY_DATA_SOURCE,
          imports: [DatabaseEndpointModule],
          inject: [DatabaseEndpoint, GATEWAY_CONFIG],
          useFactory: (endpoint: DatabaseEndpoint, config: GatewayConfig) => ({
            ...dataSourceOptions(endpoint, config.consumers.poolSize, config.consumers.schema, entities),
            // Other features' entities (usage/) join through TypeOrmModule.forFeature(entities, GATEWAY_DATA_SOURCE).
            autoLoadEntities: true,
            // A gateway whose database is missing at start fails soon, with the reason, rather than after 30 s.
            retryAttempts: 2,
            retryDelay: 1000,
          }),
        }),
      ],
      exports: [DatabaseEndpointModule, TypeOrmModule],
    };
  }
}
