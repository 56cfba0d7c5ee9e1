import { DataSourceOptions } from 'typeorm';
import { PetEntity } from '../pets/pet.entity';
import { CreatePets1763769600000 } from './migrations/1763769600000-CreatePets';
import { DatabaseEndpoint, postgresDataSourceOptions } from '@app/database';

export const ENTITIES = [PetEntity];
export const MIGRATIONS = [CreatePets1763769600000];

/** The one description of the database, used by the app, the migrate command and the drift check. */
export function dataSourceOptions(endpoint: DatabaseEndpoint, poolSize: number): DataSourceOptions {
  return postgresDataSourceOptions(endpoint, {
    application: 'pets',
    poolSize,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    connectionTimeoutMs: 5_000,
  });
}
