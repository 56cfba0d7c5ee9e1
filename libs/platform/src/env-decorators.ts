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
