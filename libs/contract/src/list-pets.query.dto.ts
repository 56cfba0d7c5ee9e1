import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsEnum, Matches } from 'class-validator';
import { LIST_LIMIT } from './limits';
import { PetStatus } from './pet-status.enum';
import { STATUS_MESSAGE } from './pet.dto';
import { IsIntegerInRange, OptionalButNotNull, ParseDecimalInteger } from './validators';

/**
 * The `after` cursor of listPets as the contract sees it: an opaque base64url token taken from the previous
 * page's `Link: <...>; rel="next"`. Its content is the pets service's business (it checks the signature and
 * that the cursor belongs to the same query); here only its outer shape is a rule, for validation and docs.
 */
export const PAGE_CURSOR = { maxLength: 128, pattern: '^[A-Za-z0-9_-]{1,128}$' } as const;

/** Documents and checks the `after` parameter from PAGE_CURSOR (one source for the pipe and the OpenAPI document). */
export function PageCursor(): PropertyDecorator {
  const message = `$property must be the cursor of a Link rel="next" (1 to ${PAGE_CURSOR.maxLength} base64url characters)`;
  return applyDecorators(
    ApiPropertyOptional({
      type: 'string',
      pattern: PAGE_CURSOR.pattern,
      maxLength: PAGE_CURSOR.maxLength,
      description:
        'Opaque cursor: where the previous page ended. Do not build or edit it: follow the `Link: <...>; rel="next"` ' +
        'header of a page, which repeats `limit` and `status` and adds `after`. A cursor is valid only with the ' +
        '`status` it was issued for; a malformed, altered or foreign cursor is refused with 400 `VALIDATION_FAILED`. ' +
        'Cursors do not expire: paging is by id, so animals added meanwhile are neither skipped nor repeated.',
    }),
    OptionalButNotNull(),
    // A repeated parameter arrives as an array and fails here too.
    Matches(new RegExp(PAGE_CURSOR.pattern), { message }),
  );
}

/** Query of listPets (spec 4.1, plus keyset paging). Unknown parameters are rejected with 400. */
export class ListPetsQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    format: 'int32',
    minimum: LIST_LIMIT.min,
    maximum: LIST_LIMIT.max,
    default: LIST_LIMIT.default,
    description: `Maximum number of animals returned (${LIST_LIMIT.min} to ${LIST_LIMIT.max}). Any other value, a non-integer or a repeated parameter is refused with 400.`,
  })
  @ParseDecimalInteger()
  @OptionalButNotNull()
  @IsIntegerInRange(LIST_LIMIT.min, LIST_LIMIT.max)
  limit?: number;

  @ApiPropertyOptional({
    enum: PetStatus,
    enumName: 'PetStatus',
    description: 'Only animals with this status are returned. An unknown value is refused with 400.',
  })
  @OptionalButNotNull()
  @IsEnum(PetStatus, { message: STATUS_MESSAGE })
  status?: PetStatus;

  @PageCursor()
  after?: string;
}
