import { IsIn, IsOptional, IsString, MinLength, ValidateBy } from 'class-validator';
import { EnvIntRange } from './env-decorators';
import { EnvSecret } from './environment';
import { DEFAULT_HTTP_SERVER_LIMITS, HttpServerLimits } from './http-server';
import { LOG_LEVELS, LogLevelName } from './log-level';

/** Variables both apps read, declared once; each app's environment class extends this one. */
export class CommonEnvironment {
  @IsOptional()
  @EnvSecret()
  @MinLength(16, { message: 'INTERNAL_SECRET must be at least 16 characters long' })
  @NotAPlaceholderInProduction()
  INTERNAL_SECRET?: string = undefined;

  @IsString()
  METRICS_HOST = '127.0.0.1';

  @EnvIntRange('SHUTDOWN_GRACE_MS', 0, 600000)
  SHUTDOWN_GRACE_MS = 10000;

  @IsIn(LOG_LEVELS, { message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` })
  LOG_LEVEL: LogLevelName = 'log';

  @IsIn(['development', 'production', 'test'], { message: 'NODE_ENV must be development, production or test' })
  NODE_ENV = 'development';

  @EnvIntRange('KEEP_ALIVE_TIMEOUT_MS', 1000, 3600000)
  KEEP_ALIVE_TIMEOUT_MS = DEFAULT_HTTP_SERVER_LIMITS.keepAliveTimeoutMs;

  @EnvIntRange('HEADERS_TIMEOUT_MS', 1000, 600000)
  HEADERS_TIMEOUT_MS = DEFAULT_HTTP_SERVER_LIMITS.headersTimeoutMs;

  @EnvIntRange('REQUEST_TIMEOUT_MS', 1000, 600000)
  @NotBelow('HEADERS_TIMEOUT_MS')
  REQUEST_TIMEOUT_MS = DEFAULT_HTTP_SERVER_LIMITS.requestTimeoutMs;
}

/**
 * Values published as examples (the compose file's former default, documentation samples): in production a
 * secret everyone can read is no secret, so the app refuses it (NotAPlaceholderInProduction).
 */
const PLACEHOLDER_SECRETS = [
  /change.?me/i,
  /placeholder/i,
  /example/i,
  /^(secret|password|internal.?secret)[-_]?\d*$/i,
];

export function NotAPlaceholderInProduction(): PropertyDecorator {
  return ValidateBy({
    name: 'notAPlaceholderInProduction',
    validator: {
      validate: (value: unknown, args) =>
        (args?.object as { NODE_ENV?: string }).NODE_ENV !== 'production' ||
        typeof value !== 'string' ||
        !PLACEHOLDER_SECRETS.some((pattern) => pattern.test(value)),
      defaultMessage: (args) =>
        `${args?.property} is a published placeholder, refused in production: set a random secret (openssl rand -hex 32)`,
    },
  });
}

/** A number that must be at least another variable's value (Node refuses a request timeout below the headers'). */
function NotBelow(other: string): PropertyDecorator {
  return ValidateBy({
    name: 'notBelow',
    validator: {
      validate: (value: unknown, args) =>
        typeof value !== 'number' || value >= Number((args?.object as Record<string, unknown>)[other]),
      defaultMessage: (args) => `${args?.property} must not be below ${other}`,
    },
  });
}

/** The server timeouts read from a CommonEnvironment. */
export function httpServerLimitsOf(env: CommonEnvironment): HttpServerLimits {
  return {
    keepAliveTimeoutMs: env.KEEP_ALIVE_TIMEOUT_MS,
    headersTimeoutMs: env.HEADERS_TIMEOUT_MS,
    requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
  };
}
