import { plainToInstance } from 'class-transformer';
import { ValidationError, validateSync } from 'class-validator';

/** Thrown when the environment is wrong; its message is the one line printed before the process exits. */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
}

function describe(errors: ValidationError[]): string[] {
  return errors.map((error) => {
    const rule = Object.values(error.constraints ?? {})[0] ?? 'is invalid';
    const got = error.value === undefined ? '' : ` (got "${String(error.value)}")`;
    return `${rule}${got}`;
  });
}

/**
 * Reads the environment once into a typed, validated object. `schema` is a class-validator class whose
 * property names are the variable names; its property initialisers are the defaults.
 */
export function loadEnvironment<T extends object>(
  schema: new () => T,
  env: Record<string, string | undefined> = process.env,
): T {
  const present = Object.fromEntries(
    Object.keys(new schema()).filter((name) => env[name] !== undefined && env[name] !== '').map((name) => [name, env[name]]),
  );
  const config = plainToInstance(schema, present, { exposeDefaultValues: true });
  const errors = validateSync(config, { forbidUnknownValues: true });
  if (errors.length > 0) {
    throw new ConfigurationError(`Invalid configuration: ${describe(errors).join('; ')}`);
  }
  return config;
}
