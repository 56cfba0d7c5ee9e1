import { ArgumentMetadata, Type, ValidationError, ValidationPipe, ValidationPipeOptions } from '@nestjs/common';
import { ApiError } from '@app/errors';
import { getMetadataStorage } from 'class-validator';

/** Contract DTOs are flat; anything nested deeper is refused before class-transformer recurses into it. */
const MAX_DEPTH = 4;

/** Whether `value` holds an object or array at depth `max` or below; iterative, so any depth is safe to walk. */
export function deeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth >= max) return true;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return false;
}

const knownProperties = new Map<Type<unknown>, Set<string>>();

/** The properties a DTO class declares rules for (class-validator's own metadata: one source of truth). */
function propertiesOf(metatype: Type<unknown>): Set<string> {
  let known = knownProperties.get(metatype);
  if (!known) {
    const rules = getMetadataStorage().getTargetValidationMetadatas(metatype, '', true, false);
    known = new Set(rules.map((rule) => rule.propertyName));
    knownProperties.set(metatype, known);
  }
  return known;
}

const WHAT: Record<string, [string, string]> = {
  body: ['field', 'fields'],
  query: ['query parameter', 'query parameters'],
  param: ['path parameter', 'path parameters'],
};

/** "unknown field `color`: allowed fields are name, categoryId, status" (the allowed ones, so a typo is obvious). */
function unknownMessage(type: string, unknown: string[], allowed: string[]): string {
  const [one, many] = WHAT[type] ?? ['property', 'properties'];
  const names = unknown.map((name) => `\`${name.replace(/[^\x20-\x7e]/g, '?').slice(0, 64)}\``).join(', ');
  return `unknown ${unknown.length === 1 ? one : many} ${names}: allowed ${many} are ${allowed.join(', ')}`;
}

function messages(errors: ValidationError[]): string[] {
  return errors.flatMap((error) => [...Object.values(error.constraints ?? {}), ...messages(error.children ?? [])]);
}

/**
 * The house's strictness, for every ValidationPipe of ours (the public contract's and the admin API's): nothing
 * is coerced, unknown fields are refused, the first broken rule of each field is the one reported.
 */
export const STRICT_VALIDATION: Readonly<ValidationPipeOptions> = {
  transform: true,
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
  stopAtFirstError: true,
  transformOptions: { enableImplicitConversion: false },
  validationError: { target: false, value: false },
};

/**
 * Validation for the contract DTOs: STRICT_VALIDATION, and the first broken rule of each field is reported by
 * name as a VALIDATION_FAILED error.
 */
export class ContractValidationPipe extends ValidationPipe {
  constructor() {
    super({
      ...STRICT_VALIDATION,
      exceptionFactory: (errors) => new ApiError('VALIDATION_FAILED', messages(errors).join('; ')),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (
      metadata.type === 'body' &&
      (value === undefined || value === null || typeof value !== 'object' || Array.isArray(value))
    ) {
      throw new ApiError(
        'VALIDATION_FAILED',
        value === undefined ? 'A JSON request body is required.' : 'The request body must be a JSON object.',
      );
    }
    if (metadata.metatype && typeof value === 'object' && value !== null && this.toValidate(metadata)) {
      if (deeperThan(value, MAX_DEPTH)) throw new ApiError('VALIDATION_FAILED', 'The request is nested too deeply.');
      // Checked before class-transformer runs: it silently skips keys such as __proto__ and constructor.
      const known = propertiesOf(metadata.metatype);
      const unknown = Object.keys(value).filter((key) => !known.has(key));
      if (unknown.length > 0)
        throw new ApiError('VALIDATION_FAILED', unknownMessage(metadata.type, unknown, [...known]));
    }
    return super.transform(value, metadata);
  }
}
