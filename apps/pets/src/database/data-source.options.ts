import { DataSourceOptions } from 'typeorm';
import { PetEntity } from '../pets/pet.entity';
import { CreatePets1763769600000 } from './migrations/1763769600000-CreatePets';
import { DatabaseEndpoint, TypeOrmJsonLogger } from '@app/database';

export const ENTITIES = [PetEntity];
export const MIGRATIONS = [CreatePets1763769600000];

/** The one description of the database, used by the app, the migrate command and the drift check. */
export function dataSourceOptions(endpoint: DatabaseEndpoint, poolSize: number): DataSourceOptions {
  return {
    type: 'postgres',
    url: endpoint.url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'all',
    synchronize: false,
    migrationsRun: false,
    // Through the app's JSON logger, without parameters (TypeORM's own logger prints them to the console).
    logger: new TypeOrmJsonLogger(),
    extra: {
      max: Math.min(poolSize, endpoint.maxPoolSize),
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
      application_name: 'pets',
    },
  };
}
