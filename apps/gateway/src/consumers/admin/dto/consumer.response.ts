import { ApiProperty } from '@nestjs/swagger';
import { ApiKeyEntity } from '../../api-key.entity';
import { limitsOf } from '../../consumer';
import { ConsumerWithKeys } from '../../consumer.repository';
import { Limits, PLAN_NAMES, PlanName } from '../../../plans/plans';
import { FileConsumerDto } from './import-consumers.dto';
import { LimitsDto } from './limits.dto';

export class KeyResponse {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({
    example: 'petk_AbCd…',
    description: 'The first characters: enough to recognise a key, never to use it.',
  })
  hint!: string;
  @ApiProperty({ enum: ['active', 'expired', 'revoked'] }) state!: 'active' | 'expired' | 'revoked';
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) expiresAt!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) revokedAt!: string | null;
  @ApiProperty({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'Set once the key is rotated: its successor (a key is rotated once).',
  })
  replacedBy!: string | null;
  @ApiProperty({
    type: [String],
    nullable: true,
    example: ['10.1.5.0/24'],
    description: "Where the key may be used from, within its consumer's allowedAddresses (null: anywhere they allow).",
  })
  allowedAddresses!: string[] | null;
}

/** A key as issued: the only answer that ever carries the key itself. */
export class IssuedKeyResponse extends KeyResponse {
  @ApiProperty({
    example: 'petk_…',
    description: 'The API key. Shown only in this answer: only its SHA-256 is stored.',
  })
  key!: string;
}

export class ConsumerResponse {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ example: 'acme' }) name!: string;
  @ApiProperty({ enum: PLAN_NAMES }) plan!: PlanName;
  @ApiProperty({ type: LimitsDto, nullable: true, description: "The consumer's own limits (null: its plan's)." })
  limits!: Limits | null;
  @ApiProperty({ type: LimitsDto, nullable: true, description: "The limits it is held to: its own, else its plan's." })
  effectiveLimits!: Limits | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time' }) updatedAt!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) disabledAt!: string | null;
  @ApiProperty({ format: 'email', nullable: true, type: String, description: 'Its contact address, lower-cased.' })
  email!: string | null;
  @ApiProperty({
    type: [String],
    nullable: true,
    example: ['10.1.0.0/16', '2001:db8::/32'],
    description: 'Where its keys and tokens may be used from (null: anywhere).',
  })
  allowedAddresses!: string[] | null;
  @ApiProperty({ type: [KeyResponse] }) keys!: KeyResponse[];
}

export class CreatedConsumerResponse {
  @ApiProperty({ type: ConsumerResponse }) consumer!: ConsumerResponse;
  @ApiProperty({ type: IssuedKeyResponse }) key!: IssuedKeyResponse;
}

export class ConsumerPageResponse {
  @ApiProperty({ type: [ConsumerResponse] }) items!: ConsumerResponse[];
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Pass as `after` for the next page; null on the last page.',
  })
  next!: string | null;
}

export class RotatedKeyResponse {
  @ApiProperty({ type: IssuedKeyResponse }) key!: IssuedKeyResponse;
  @ApiProperty({ type: KeyResponse, description: 'The old key, with the expiry the overlap gave it.' })
  previous!: KeyResponse;
}

export class WindowUsageResponse {
  @ApiProperty({
    enum: ['minute', 'day', 'month'],
    description: '`month`: the monthly quota, when there is one (docs/billing.md).',
  })
  name!: string;
  @ApiProperty({ type: 'integer' }) limit!: number;
  @ApiProperty({ type: 'integer', description: 'Requests admitted in the current window.' }) used!: number;
  @ApiProperty({ type: 'integer' }) remaining!: number;
  @ApiProperty({ type: 'integer', description: 'Seconds until the window resets.' }) resetSeconds!: number;
}

export class UsageResponse {
  @ApiProperty() consumer!: string;
  @ApiProperty({ enum: PLAN_NAMES }) plan!: PlanName;
  @ApiProperty({ type: [WindowUsageResponse] }) windows!: WindowUsageResponse[];
  @ApiProperty() banned!: boolean;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Seconds left of a ban.' }) banSecondsLeft!:
    number | null;
}

/** One page of the consumers-file format (`keys export`): every field, hashes only. */
export class ExportPageResponse {
  @ApiProperty({
    type: [FileConsumerDto],
    description: 'Consumers in name order, in the format POST /import reads back.',
  })
  consumers!: FileConsumerDto[];
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Pass as `after` for the next page; null on the last page.',
  })
  next!: string | null;
}

export class ImportResponse {
  @ApiProperty({ type: 'integer' }) created!: number;
  @ApiProperty({ type: 'integer' }) updated!: number;
  @ApiProperty({ type: 'integer' }) unchanged!: number;
}

export function toKeyResponse(key: ApiKeyEntity, now: number): KeyResponse {
  const expired = key.expiresAt !== null && key.expiresAt.getTime() <= now;
  return {
    id: key.id,
    hint: key.hint,
    state: key.revokedAt !== null ? 'revoked' : expired ? 'expired' : 'active',
    createdAt: key.createdAt.toISOString(),
    expiresAt: key.expiresAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
    replacedBy: key.replacedBy,
    allowedAddresses: key.allowedAddresses,
  };
}

export function toIssuedKeyResponse(key: string, record: ApiKeyEntity, now: number): IssuedKeyResponse {
  return { ...toKeyResponse(record, now), key };
}

export function toConsumerResponse(
  { consumer, keys }: ConsumerWithKeys,
  effectiveLimits: Limits | undefined,
  now: number,
): ConsumerResponse {
  return {
    id: consumer.id,
    name: consumer.name,
    plan: consumer.plan,
    limits: limitsOf(consumer),
    effectiveLimits: effectiveLimits ?? null,
    createdAt: consumer.createdAt.toISOString(),
    updatedAt: consumer.updatedAt.toISOString(),
    disabledAt: consumer.disabledAt?.toISOString() ?? null,
    email: consumer.email,
    allowedAddresses: consumer.allowedAddresses,
    keys: keys.map((k) => toKeyResponse(k, now)),
  };
}
