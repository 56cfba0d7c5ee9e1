import { STRICT_VALIDATION } from '@app/contract';
import { ApiError } from '@app/errors';
import { ValidationError, ValidationPipe } from '@nestjs/common';

function messages(errors: ValidationError[], path = ''): string[] {
  return errors.flatMap((error) => {
    const where = path ? `${path}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((m) => (path ? `${where}: ${m}` : m));
    return [...own, ...messages(error.children ?? [], where)];
  });
}

/**
 * The admin API's validation: the public contract's STRICT_VALIDATION (nothing coerced, unknown fields
 * refused, VALIDATION_FAILED naming the field), with nested bodies allowed (an import batch is an array of
 * consumers, each with its keys) and the path of a nested field in the message.
 */
export class AdminValidationPipe extends ValidationPipe {
  constructor() {
    super({
      ...STRICT_VALIDATION,
      exceptionFactory: (errors) => new ApiError('VALIDATION_FAILED', messages(errors).join('; ') || 'The request is not valid.'),
    });
  }
}
