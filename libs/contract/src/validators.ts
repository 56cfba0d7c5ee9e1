import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsDefined, ValidateBy, ValidateIf, ValidationOptions } from 'class-validator';
import { NAME_RULES } from './limits';
import { plainTextProblem } from './plain-text';

/** A JSON number that is an integer within [min, max]: strings, booleans and fractions are refused, never coerced. */
export function IsIntegerInRange(min: number, max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isIntegerInRange',
      constraints: [min, max],
      validator: {
        validate: (value: unknown) =>
          typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max,
        defaultMessage: () => `$property must be an integer from ${min} to ${max}`,
      },
    },
    options,
  );
}

/** Checks the `name` rules of NAME_RULES; each failure names the rule that was broken. */
export function IsPetName(): PropertyDecorator {
  return ValidateBy({
    name: 'isPetName',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && petNameProblem(value) === undefined,
      defaultMessage: (args) =>
        typeof args?.value === 'string'
          ? `$property ${petNameProblem(args.value) ?? 'is invalid'}`
          : '$property must be a string',
    },
  });
}

export function petNameProblem(name: string): string | undefined {
  const length = [...name].length;
  if (length < NAME_RULES.minLength || length > NAME_RULES.maxLength) {
    return `must be ${NAME_RULES.minLength} to ${NAME_RULES.maxLength} characters long`;
  }
  if (!name.isWellFormed()) return 'must be well-formed Unicode (no lone surrogates)';
  // The house's one rule for text (plain-text.ts), and something in it: the same as NAME_RULES.pattern.
  if (name.trim() === '' || plainTextProblem(name) !== undefined)
    return 'must not be blank or contain control characters';
  return undefined;
}

/** A field that must be present and not null. */
export function Required(): PropertyDecorator {
  return IsDefined({ message: '$property is required' });
}

/**
 * A field that may be omitted, but when present must be valid: unlike class-validator's IsOptional, `null`
 * is not treated as absent (the schema's fields are not nullable).
 */
export function OptionalButNotNull(): PropertyDecorator {
  return applyDecorators(
    ValidateIf((_object, value) => value !== undefined),
    IsDefined({ message: '$property must not be null' }),
  );
}

/**
 * Query and path values arrive as strings: only plain decimal digits become numbers. Anything else ("1.5",
 * "abc", "", "+1", a repeated parameter) is left as it is, so that the integer check refuses it.
 */
export function ParseDecimalInteger(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^-?[0-9]{1,20}$/.test(value) ? Number(value) : value,
  );
}
