import { plainToInstance } from 'class-transformer';
import { ValidationError, validateSync } from 'class-validator';

/** Thrown when the environment is wrong; its message is the one line printed before the process exits. */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
}

const SECRETS = Symbol('environment secrets');

/** Marks a variable as a secret: a configuration error names it and its rule, never its value. */
export const EnvSecret = (): PropertyDecorator => (target, property) => {
  const holder = target as { [SECRETS]?: ReadonlySet<string | symbol> };
  holder[SECRETS] = new Set([...(holder[SECRETS] ?? []), property]);
};

function isSecret(target: object | undefined, property: string): boolean {
  return (target as { [SECRETS]?: ReadonlySet<string | symbol> } | undefined)?.[SECRETS]?.has(property) ?? false;
}

function describe(errors: ValidationError[]): string[] {
  return errors.map((error) => {
    const rule = Object.values(error.constraints ?? {})[0] ?? 'is invalid';
    if (error.value === undefined) return rule;
    return isSecret(error.target, error.property) ? `${rule} (value hidden)` : `${rule} (got "${String(error.value)}")`;
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
    Object.keys(new schema())
      .filter((name) => env[name] !== undefined && env[name] !== '')
      .map((name) => [name, env[name]]),
  );
  const config = plainToInstance(schema, present, { exposeDefaultValues: true });
  const errors = validateSync(config, { forbidUnknownValues: true });
  if (errors.length > 0) {
    throw new ConfigurationError(`Invalid configuration: ${describe(errors).join('; ')}`);
  }
  return config;
}
