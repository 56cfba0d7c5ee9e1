import { applyDecorators } from '@nestjs/common';
import { Matches } from 'class-validator';

export const CONSUMER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const CONSUMER_NAME_RULE = '1-64 letters, digits, ".", "_" or "-", starting with a letter or digit';

export function IsConsumerName(): PropertyDecorator {
  return applyDecorators(Matches(CONSUMER_NAME_PATTERN, { message: `$property must be ${CONSUMER_NAME_RULE}` }));
}
