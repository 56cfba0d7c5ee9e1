import { IsIn, IsOptional, IsString, MinLength } from 'class-validator';
import { EnvIntRange } from './env-decorators';
import { LOG_LEVELS, LogLevelName } from './log-level';

/** Variables both apps read, declared once; each app's environment class extends this one. */
export class CommonEnvironment {
  @IsOptional()
  @MinLength(16, { message: 'INTERNAL_SECRET must be at least 16 characters long' })
  INTERNAL_SECRET?: string = undefined;

  @IsString()
  METRICS_HOST = '127.0.0.1';

  @EnvIntRange('SHUTDOWN_GRACE_MS', 0, 600000)
  SHUTDOWN_GRACE_MS = 10000;

  @IsIn(LOG_LEVELS, { message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` })
  LOG_LEVEL: LogLevelName = 'log';

  @IsIn(['development', 'production', 'test'], { message: 'NODE_ENV must be development, production or test' })
  NODE_ENV = 'development';
}
