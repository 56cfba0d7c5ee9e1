import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsInt, Max, Min } from 'class-validator';

/** A consumer's own limits (required on a custom plan such as Enterprise; overrides the plan's otherwise). */
export class LimitsDto {
  @ApiProperty({ type: 'integer', minimum: 1, maximum: 1_000_000_000, example: 5000 })
  @IsInt({ message: 'perMinute must be an integer' })
  @Min(1, { message: 'perMinute must be at least 1' })
  @Max(1_000_000_000, { message: 'perMinute must be at most 1000000000' })
  // Nearest the property: with stopAtFirstError, a missing field says so (not "must be at most ...").
  @IsDefined({ message: 'perMinute is required' })
  perMinute!: number;

  @ApiProperty({ type: 'integer', minimum: 1, maximum: 1_000_000_000, example: 2_000_000 })
  @IsInt({ message: 'perDay must be an integer' })
  @Min(1, { message: 'perDay must be at least 1' })
  @Max(1_000_000_000, { message: 'perDay must be at most 1000000000' })
  @IsDefined({ message: 'perDay is required' })
  perDay!: number;
}
