import { LogLevel } from '@nestjs/common';

export const LOG_LEVELS = ['error', 'warn', 'log', 'debug', 'verbose'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/** Nest's logger takes the list of enabled levels: a threshold of "warn" enables error and warn. */
export function logLevelsFrom(threshold: LogLevelName): LogLevel[] {
  return LOG_LEVELS.slice(0, LOG_LEVELS.indexOf(threshold) + 1) as LogLevel[];
}
