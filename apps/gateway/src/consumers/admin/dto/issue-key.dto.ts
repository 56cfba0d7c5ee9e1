import { IsDateTime, OptionalButNotNull } from '@app/contract';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

export class IssueKeyDto {
  @ApiPropertyOptional({ format: 'date-time', description: 'When the key stops working (none: it does not expire).' })
  @OptionalButNotNull()
  @IsDateTime()
  expiresAt?: string;
}

/** A week at most: an overlap is a migration window, not a second permanent key. */
export const MAX_OVERLAP_SECONDS = 7 * 86_400;
export const DEFAULT_OVERLAP_SECONDS = 86_400;

export class RotateKeyDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_OVERLAP_SECONDS,
    default: DEFAULT_OVERLAP_SECONDS,
    description:
      'How long the old key keeps working after the rotation (0: it stops now). Never extends an earlier expiry.',
  })
  @IsOptional()
  @Max(MAX_OVERLAP_SECONDS, { message: `overlapSeconds must be at most ${MAX_OVERLAP_SECONDS}` })
  @Min(0, { message: 'overlapSeconds must be at least 0' })
  // Nearest the property, checked first (stopAtFirstError): "3600" is not an integer, not "too large".
  @IsInt({ message: 'overlapSeconds must be an integer' })
  overlapSeconds?: number;
}
