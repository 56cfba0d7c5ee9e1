import { ArgumentMetadata, ValidationError, ValidationPipe } from '@nestjs/common';
import { ApiError } from '@app/errors';

function messages(errors: ValidationError[]): string[] {
  return errors.flatMap((error) => [
    ...Object.values(error.constraints ?? {}),
    ...messages(error.children ?? []),
  ]);
}

/**
 * Validation for the contract DTOs: nothing is coerced, unknown fields are refused, and the first broken rule
 * of each field is reported by name as a VALIDATION_FAILED error.
 */
export class ContractValidationPipe extends ValidationPipe {
  constructor() {
    super({
      transform: true,
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      stopAtFirstError: true,
      transformOptions: { enableImplicitConversion: false },
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => new ApiError('VALIDATION_FAILED', messages(errors).join('; ')),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && (value === undefined || value === null || typeof value !== 'object' || Array.isArray(value))) {
      throw new ApiError(
        'VALIDATION_FAILED',
        value === undefined ? 'A JSON request body is required.' : 'The request body must be a JSON object.',
      );
    }
    return super.transform(value, metadata);
  }
}
