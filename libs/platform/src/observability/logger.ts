import { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';
import { LogLevelName } from '../log-level';

const PINO_LEVEL: Record<LogLevelName, pino.Level> = {
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

/** One JSON logger per app. Nothing that could hold a secret (headers, bodies) is ever passed to it. */
export function createAppLogger(app: string, level: LogLevelName, destination?: pino.DestinationStream): Logger {
  return pino({ level: PINO_LEVEL[level], base: { app }, timestamp: pino.stdTimeFunctions.isoTime }, destination);
}

/**
 * Nest's own start-up narration (every module initialised, every route mapped: ~100 lines an app): debug, not
 * info, so that the default level shows what an operator acts on (docs/operations.md, "Logs").
 */
const FRAMEWORK_START_UP = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
]);

/** Nest's logger interface on top of pino, so that framework and app messages are JSON lines too. */
export class PinoLoggerService implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    const context = rest.length > 0 ? rest[rest.length - 1] : undefined;
    this.write(typeof context === 'string' && FRAMEWORK_START_UP.has(context) ? 'debug' : 'info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    // Nest passes (message, stack?, context?).
    const context = rest.length > 0 ? rest[rest.length - 1] : undefined;
    const stack = rest.length > 1 ? rest[0] : undefined;
    this.logger.error({ context, ...(typeof stack === 'string' ? { stack } : {}) }, String(message));
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }

  private write(level: 'info' | 'warn' | 'debug' | 'trace', message: unknown, rest: unknown[]): void {
    const context = rest.length > 0 ? rest[rest.length - 1] : undefined;
    this.logger[level]({ context }, typeof message === 'string' ? message : JSON.stringify(message));
  }
}
