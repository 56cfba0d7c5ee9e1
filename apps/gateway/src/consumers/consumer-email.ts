import { EMAIL_ADDRESS_RULE, isEmailAddress, normalizeEmailAddress } from '@app/contract';
import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { ValidateBy } from 'class-validator';

/** A consumer's contact email: one address (libs/contract's rule), stored and searched lower-cased. */
export function IsConsumerEmail(): PropertyDecorator {
  return applyDecorators(
    Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? normalizeEmailAddress(value) : value)),
    ValidateBy({
      name: 'isConsumerEmail',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && isEmailAddress(value),
        defaultMessage: () => `$property ${EMAIL_ADDRESS_RULE}`,
      },
    }),
  );
}
