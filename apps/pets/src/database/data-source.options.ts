import { DataSourceOptions } from 'typeorm';
import { PetEntity } from '../pets/pet.entity';
import { CreatePets1763769600000 } from './migrations/1763769600000-CreatePets';
import { DatabaseEndpoint } from '@app/database';

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
    logging: ['error'],
    extra: {
      max: Math.min(poolSize, endpoint.maxPoolSize),
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
      application_name: 'pets',
    },
  };
}
