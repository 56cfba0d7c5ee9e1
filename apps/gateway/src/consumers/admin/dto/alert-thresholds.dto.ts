import { CREDIT_AMOUNT_MAX } from '@app/contract';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsInt, IsOptional, Max, Min, ValidateBy } from 'class-validator';
import { CONSUMER_THRESHOLDS_MAX } from '../../../plans/alert-thresholds';

/** Each value above the one before it (sorted, no repeats). */
const IsAscending = () =>
  ValidateBy({
    name: 'isAscending',
    validator: {
      validate: (value: unknown) =>
        Array.isArray(value) && value.every((item, i) => i === 0 || (item as number) > (value[i - 1] as number)),
      defaultMessage: () => '$property must be in ascending order without repeats',
    },
  });

/** A consumer's own alert thresholds (docs/alerts.md): either side in place of its plan's. */
export class AlertThresholdsBody {
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'integer', minimum: 1, maximum: 100 },
    minItems: 1,
    maxItems: CONSUMER_THRESHOLDS_MAX,
    example: [50, 90, 100],
    description: `Whole percents of the day window and the monthly quota that raise a \`quota.threshold_crossed\` event, ascending, at most ${CONSUMER_THRESHOLDS_MAX}. Absent: its plan's.`,
  })
  // With stopAtFirstError, the rule nearest the property is checked first: its shape, then its items, then their order.
  @IsAscending()
  @Max(100, { each: true, message: 'thresholdsPercent must hold percents from 1 to 100' })
  @Min(1, { each: true, message: 'thresholdsPercent must hold percents from 1 to 100' })
  @IsInt({ each: true, message: 'thresholdsPercent must hold whole percents' })
  @ArrayMaxSize(CONSUMER_THRESHOLDS_MAX, {
    message: `thresholdsPercent takes at most ${CONSUMER_THRESHOLDS_MAX} thresholds`,
  })
  @ArrayMinSize(1, { message: 'thresholdsPercent must not be empty' })
  @IsArray({ message: 'thresholdsPercent must be a list of whole percents' })
  @IsOptional()
  thresholdsPercent?: number[];

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: CREDIT_AMOUNT_MAX,
    example: 500,
    description:
      "The credit balance called low (a `credits.low_balance` event when the balance falls to it; 0: only `credits.exhausted`). Absent: its plan's.",
  })
  @Max(CREDIT_AMOUNT_MAX, { message: `creditsLowBalance must be at most ${CREDIT_AMOUNT_MAX}` })
  @Min(0, { message: 'creditsLowBalance must be at least 0' })
  @IsInt({ message: 'creditsLowBalance must be an integer' })
  @IsOptional()
  creditsLowBalance?: number;
}
