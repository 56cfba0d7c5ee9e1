export * from './database-endpoint';
export * from './external-postgres.endpoint';
export * from './embedded-pglite.endpoint';
export * from './run-migrations';
export * from './pool-error-guard';
export * from './pglite-wire-server';
export * from './typeorm-json-logger';
export * from './postgres-data-source.options';
