import { applyDecorators } from '@nestjs/common';
import { IsInt, Max, Min } from 'class-validator';
import { Transform } from 'class-transformer';

/** Environment values are strings: turn "123" into 123, leaving anything else for the validator to refuse. */
export const EnvInteger = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^[0-9]+$/.test(value) ? Number(value) : value,
  );

/** "true"/"false"/"1"/"0" become booleans; anything else is left for the validator to refuse. */
export const EnvBoolean = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) => {
    if (typeof value === 'boolean') return value;
    if (value === 'true' || value === '1') return true;
    if (value === 'false' || value === '0') return false;
    return value;
  });

/** An integer variable within [min, max]; every failure says so in the same words. */
export const EnvIntRange = (name: string, min: number, max: number): PropertyDecorator => {
  const message = `${name} must be an integer from ${min} to ${max}`;
  return applyDecorators(EnvInteger(), IsInt({ message }), Min(min, { message }), Max(max, { message }));
};
