import { Logger } from '@nestjs/common';
import type { EventEmitter } from 'node:events';
import { DataSource } from 'typeorm';

interface PgPool extends EventEmitter {
  _clients?: EventEmitter[];
}

const GUARDED = Symbol('pool error guard');

/**
 * node-postgres hands a client out of its pool before TypeORM attaches its own 'error' listener: a server that
 * terminates sessions (a restart, `pg_ctl stop -m fast`) in that moment emits 'error' with no listener, which
 * would crash the process. Every client of the pool gets a listener of its own, for its whole life; the pool
 * and TypeORM still see and handle the error through theirs.
 */
export function guardPoolClients(dataSource: DataSource): void {
  const pool = (dataSource.driver as unknown as { master?: PgPool }).master;
  if (!pool) return;
  const logger = new Logger('Database');
  const guard = (client: EventEmitter & { [GUARDED]?: boolean }) => {
    if (client[GUARDED]) return;
    client[GUARDED] = true;
    client.on('error', (error: Error) => logger.warn(`Database connection lost: ${error.message}`));
  };
  for (const client of pool._clients ?? []) guard(client);
  pool.on('connect', guard);
}
