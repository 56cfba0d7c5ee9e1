import { deeperThan, STRICT_VALIDATION } from '@app/contract';
import { ApiError } from '@app/errors';
import { ArgumentMetadata, ValidationError, ValidationPipe } from '@nestjs/common';

/**
 * Deeper than any admin DTO (an import body: consumers, a consumer, its keys, a key, its allowedAddresses): refused
 * before class-transformer recurses into it (a JSON document nested 100,000 deep would overflow its stack: a 500).
 */
const MAX_DEPTH = 6;

/**
 * Each broken rule's message, a nested field's by its path: "limits.perDay is required" (the rule's own message
 * names the field: its name becomes the path), "consumers.0.keys: each entry of keys must be an object".
 */
function messages(errors: ValidationError[], path = ''): string[] {
  return errors.flatMap((error) => {
    const where = path ? `${path}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((m) => {
      if (!path) return m;
      return m.startsWith(`${error.property} `) ? `${where}${m.slice(error.property.length)}` : `${where}: ${m}`;
    });
    return [...own, ...messages(error.children ?? [], where)];
  });
}

/**
 * The admin API's validation: the public contract's STRICT_VALIDATION (nothing coerced, unknown fields
 * refused, VALIDATION_FAILED naming the field), with nested bodies allowed (an import batch is an array of
 * consumers, each with its keys, at most MAX_DEPTH deep) and the path of a nested field in the message. A body
 * that is not a JSON object is refused before its DTO is built.
 */
export class AdminValidationPipe extends ValidationPipe {
  constructor() {
    super({
      ...STRICT_VALIDATION,
      exceptionFactory: (errors) =>
        new ApiError('VALIDATION_FAILED', messages(errors).join('; ') || 'The request is not valid.'),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // @AdminCall's context is the server's own value, not the client's: nothing to validate.
    if (metadata.type === 'custom') return value;
    if (
      metadata.type === 'body' &&
      value !== undefined &&
      (value === null || typeof value !== 'object' || Array.isArray(value))
    ) {
      throw new ApiError('VALIDATION_FAILED', 'The request body must be a JSON object.');
    }
    if (deeperThan(value, MAX_DEPTH)) throw new ApiError('VALIDATION_FAILED', 'The request is nested too deeply.');
    return super.transform(value, metadata);
  }
}
