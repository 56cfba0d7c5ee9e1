import { Logger } from '@nestjs/common';
import type { Logger as TypeOrmLogger } from 'typeorm';

/** Long statements (a batch insert) are cut: the log line names the statement, it does not archive it. */
const MAX_STATEMENT_CHARS = 500;

/**
 * SQLSTATE class 23, integrity constraint violations (a duplicate name, a hash held by another consumer): the
 * apps turn them into 400s, so they are warnings, not errors.
 */
const CONSTRAINT_VIOLATION = /^23/;

function statement(query: string): string {
  const line = query.replace(/\s+/g, ' ').trim();
  return line.length > MAX_STATEMENT_CHARS ? `${line.slice(0, MAX_STATEMENT_CHARS)}…` : line;
}

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * TypeORM's logger for both apps: its lines go through Nest's logger, i.e. the app's JSON logger, never to the
 * console, and never with a query's parameters (a consumer's name, an animal's name: what clients sent). A failed
 * query is one line: its SQLSTATE, the statement (with its $n placeholders) and the database's reason. Queries
 * that succeed are not logged (TypeORM calls logQuery for every one: it costs nothing here).
 */
export class TypeOrmJsonLogger implements TypeOrmLogger {
  private readonly logger = new Logger('TypeORM');

  logQuery(): void {}

  /** `_parameters`: what the client sent, never logged. */
  logQueryError(error: string | Error, query: string, _parameters?: unknown): void {
    const code = sqlState(error);
    const reason = typeof error === 'string' ? error : error.message;
    const line = `Query failed${code ? ` (${code})` : ''}: ${statement(query)} -- ${reason}`;
    if (code && CONSTRAINT_VIOLATION.test(code)) this.logger.warn(line);
    else this.logger.error(line);
  }

  logQuerySlow(time: number, query: string): void {
    this.logger.warn(`Slow query (${time} ms): ${statement(query)}`);
  }

  logSchemaBuild(message: string): void {
    this.logger.debug(message);
  }

  logMigration(message: string): void {
    this.logger.log(message);
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    const text = typeof message === 'string' ? message : JSON.stringify(message);
    if (level === 'warn') this.logger.warn(text);
    else this.logger.log(text);
  }
}
