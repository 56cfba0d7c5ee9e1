import { CREDIT_AMOUNT_MAX, IsPlainText, PUBLIC_OPERATION_IDS } from '@app/contract';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Length, Matches, Max, Min, ValidateIf } from 'class-validator';
import type { LedgerEntry } from '../../../credits/credit-ledger.repository';
import type { CreditsView, LedgerView } from '../credits-admin.service';

/** The longest ledger window, in days. */
export const LEDGER_DAYS_MAX = 366;

export class CreditRefillBody {
  @ApiProperty({ type: 'integer', minimum: 1, maximum: CREDIT_AMOUNT_MAX, example: 1000 })
  amount!: number;

  @ApiProperty({ enum: ['day', 'month'], example: 'day', description: '`month`: on the billing anchor.' })
  every!: 'day' | 'month';
}

/** The reason's rule, in the OpenAPI document (docs/errors.md, "Text"). */
const REASON_RULE = 'One line of text: no control characters (NUL, line breaks, tabs, DEL, C1).';

const COSTS_EXAMPLE = { listPets: 1, createPet: 5, getPet: 1 };

export class TopUpDto {
  @ApiProperty({ type: 'integer', minimum: 1, maximum: CREDIT_AMOUNT_MAX, example: 500 })
  @IsInt({ message: 'amount must be an integer' })
  @Min(1, { message: 'amount must be at least 1' })
  @Max(CREDIT_AMOUNT_MAX, { message: `amount must be at most ${CREDIT_AMOUNT_MAX}` })
  amount!: number;

  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Invoice 2026-0042 paid', description: REASON_RULE })
  @IsString({ message: 'reason must be a string' })
  @Length(1, 200, { message: 'reason must be 1 to 200 characters' })
  @IsPlainText()
  reason!: string;
}

export class SetCreditsDto {
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: CREDIT_AMOUNT_MAX,
    nullable: true,
    example: 1000,
    description: 'The new balance; null: credits are no longer in force for the consumer.',
  })
  @ValidateIf((_, value) => value !== null)
  @IsInt({ message: 'balance must be an integer or null' })
  @Min(0, { message: 'balance must be at least 0' })
  @Max(CREDIT_AMOUNT_MAX, { message: `balance must be at most ${CREDIT_AMOUNT_MAX}` })
  balance!: number | null;

  @ApiProperty({
    minLength: 1,
    maxLength: 200,
    example: 'Correction after support ticket 812',
    description: REASON_RULE,
  })
  @IsString({ message: 'reason must be a string' })
  @Length(1, 200, { message: 'reason must be 1 to 200 characters' })
  @IsPlainText()
  reason!: string;
}

export class LedgerQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: LEDGER_DAYS_MAX, default: 30 })
  @IsOptional()
  @Matches(/^[1-9][0-9]{0,2}$/, { message: `days must be an integer from 1 to ${LEDGER_DAYS_MAX}` })
  days?: string;
}

export class LedgerEntryResponse {
  @ApiProperty({ example: '0b8e2c1a-4f3d-4a6b-9c2e-7d1f5a3b8e90' }) id!: string;
  @ApiProperty({ format: 'date-time' }) at!: string;
  @ApiProperty({ enum: ['top-up', 'set', 'refill'] }) kind!: string;
  @ApiProperty({
    type: 'integer',
    example: 500,
    description: "The change this entry made to the balance (a set's may be negative; a refill's may be 0).",
  })
  amount!: number;
  @ApiProperty({ type: 'integer', example: 620 }) balanceAfter!: number;
  @ApiProperty({ type: String, nullable: true, example: 'Invoice 2026-0042 paid' }) reason!: string | null;
  @ApiProperty({ example: 'root', description: 'The admin token, or `gateway` for a refill.' }) actor!: string;
}

export class TopUpResponse {
  @ApiProperty({ type: 'integer', example: 620 }) balance!: number;
  @ApiProperty({ type: LedgerEntryResponse }) entry!: LedgerEntryResponse;
}

export class SetCreditsResponse {
  @ApiProperty({ type: 'integer', nullable: true, example: 1000 }) balance!: number | null;
}

export class SpendDayResponse {
  @ApiProperty({ example: '2026-11-27' }) day!: string;
  @ApiProperty({ type: 'integer', example: 42 }) spent!: number;
}

export class LedgerResponse {
  @ApiProperty({ type: 'integer', nullable: true, example: 120, description: 'null: credits not in force.' })
  balance!: number | null;
  @ApiProperty({ type: [LedgerEntryResponse], description: 'Newest first, within the window.' })
  entries!: LedgerEntryResponse[];
  @ApiProperty({ type: [SpendDayResponse], description: 'One per UTC day of the window, oldest first.' })
  spendPerDay!: SpendDayResponse[];
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'At the mean spend of the last 7 days; null at a balance of 0 (already exhausted), without spend, when a refill covers it, or when the date would be past the last one a date-time can write (+275760-09-13): see `exhaustion`.',
  })
  projectedExhaustionAt!: string | null;
  @ApiProperty({
    enum: ['projected', 'exhausted', 'not-expected', 'not-within-any-date'],
    example: 'projected',
    description:
      'projected: `projectedExhaustionAt` holds the date. exhausted: the balance is 0 (credits in force): exhausted until the next refill (`nextRefillAt` of the billing answer), or until a top-up when none is scheduled. not-expected: no spend, no credits, or a refill covers the spend. not-within-any-date: at this spend the balance lasts past the last representable date (a large balance, a tiny spend).',
  })
  exhaustion!: 'projected' | 'exhausted' | 'not-expected' | 'not-within-any-date';
}

export class CreditsResponse {
  @ApiProperty({ type: 'integer', minimum: 0, example: 120 }) balance!: number;
  @ApiProperty({ type: CreditRefillBody, nullable: true, description: "Effective: its own, else its plan's." })
  refill!: CreditRefillBody | null;
  @ApiProperty({ description: "true: its own refill; false: its plan's (or none)." }) refillSet!: boolean;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) nextRefillAt!: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    example: COSTS_EXAMPLE,
    description: `The effective cost of every public operation (${PUBLIC_OPERATION_IDS.join(', ')}).`,
  })
  costs!: Record<string, number>;
}

export const toLedgerEntryResponse = (entry: LedgerEntry): LedgerEntryResponse => ({
  id: entry.id,
  at: entry.at.toISOString(),
  kind: entry.kind,
  amount: entry.amount,
  balanceAfter: entry.balanceAfter,
  reason: entry.reason,
  actor: entry.actor,
});

export const toLedgerResponse = (view: LedgerView): LedgerResponse => ({
  balance: view.balance,
  entries: view.entries.map(toLedgerEntryResponse),
  spendPerDay: view.spendPerDay,
  projectedExhaustionAt: view.projectedExhaustionAt?.toISOString() ?? null,
  exhaustion: view.exhaustion,
});

export const toCreditsResponse = (view: CreditsView | null): CreditsResponse | null =>
  view && {
    balance: view.balance,
    refill: view.refill,
    refillSet: view.refillSet,
    nextRefillAt: view.nextRefillAt?.toISOString() ?? null,
    costs: view.costs,
  };

export { COSTS_EXAMPLE };
