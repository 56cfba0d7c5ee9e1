import { DATE_TIME_SYNTAX, IsDateTime, IsIntegerInRange, IsPlainText, ParseDecimalInteger } from '@app/contract';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { AuditChanges, AuditEntryEntity } from '../../audit-entry.entity';
import { AUDIT_ORDERS, AuditOrder } from '../../audit-log';
import { PAGE_SIZE } from '../../../admin-conventions/page-size';

export class ListAuditQueryDto {
  @ApiPropertyOptional({
    format: 'date-time',
    description: `Rows at or after this time. ${DATE_TIME_SYNTAX['date-time']}`,
  })
  @IsOptional()
  @IsDateTime()
  from?: string;

  @ApiPropertyOptional({ format: 'date-time', description: `Rows before this time. ${DATE_TIME_SYNTAX['date-time']}` })
  @IsOptional()
  @IsDateTime()
  to?: string;

  @ApiPropertyOptional({ description: 'A token name, a token id, `root` or `anonymous`.' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  @IsPlainText()
  actor?: string;

  @ApiPropertyOptional({ description: 'A consumer name, a key id or a token id.' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  @IsPlainText()
  target?: string;

  @ApiPropertyOptional({ example: 'key.rotate' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  @IsPlainText()
  action?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: PAGE_SIZE.min, maximum: PAGE_SIZE.max, default: PAGE_SIZE.default })
  @IsOptional()
  @ParseDecimalInteger()
  @IsIntegerInRange(PAGE_SIZE.min, PAGE_SIZE.max)
  limit?: number;

  @ApiPropertyOptional({
    enum: AUDIT_ORDERS,
    default: 'asc',
    description: '`asc`: oldest first; `desc`: newest first.',
  })
  @IsOptional()
  @IsIn(AUDIT_ORDERS, { message: `order must be one of ${AUDIT_ORDERS.join(', ')}` })
  order?: AuditOrder;

  @ApiPropertyOptional({ description: 'The `next` of the previous page (in the same `order`).' })
  @IsOptional()
  @Matches(/^[0-9]{1,19}$/, { message: 'after must be the next of a previous page' })
  after?: string;
}

export class AuditEntryResponse {
  @ApiProperty() id!: string;
  @ApiProperty({ format: 'date-time' }) at!: string;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'uuid',
    description: 'The admin token; null for root and anonymous.',
  })
  actorId!: string | null;
  @ApiProperty({ example: 'portal' }) actorName!: string;
  @ApiProperty({ example: 'key.rotate' }) action!: string;
  @ApiProperty({ type: String, nullable: true }) targetConsumer!: string | null;
  @ApiProperty({ type: String, nullable: true, format: 'uuid' }) targetKey!: string | null;
  @ApiProperty({ type: String, nullable: true, format: 'uuid' }) targetToken!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'petk_F7WF…',
    description: "The target key's hint, as every page names a key (never the key).",
  })
  targetKeyHint!: string | null;
  @ApiProperty({
    type: 'object',
    nullable: true,
    additionalProperties: { type: 'object', properties: { before: {}, after: {} }, required: ['before', 'after'] },
    description: '`{field: {before, after}}` of what changed.',
  })
  changes!: AuditChanges | null;
  @ApiProperty({ type: String, nullable: true }) requestId!: string | null;
  @ApiProperty({ type: String, nullable: true }) source!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'account:3f2c9a4e-… dev@example.com',
    description:
      'The end user behind a call made by the portal or the console (X-On-Behalf-Of, from a token allowed to act for users).',
  })
  onBehalfOf!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: '203.0.113.7',
    description: "That end user's address, as the web app saw it (X-End-User-Address).",
  })
  endUserAddress!: string | null;
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    example: 1,
    description:
      'How many calls the row stands for: 1, or on an aggregate row the refusals of one source, status and actor in its minute beyond the rows of their own.',
  })
  count!: number;
  @ApiProperty({
    description:
      "An aggregate row: `count` more refused calls from `source` in the minute `changes.minute` (the details are the first one's).",
  })
  aggregated!: boolean;
}

/** What GET /audit shows: a key action by the person behind the console, and refusals counted on one row. */
const AUDIT_PAGE_EXAMPLE: AuditEntryResponse[] = [
  {
    id: '1041',
    at: '2026-11-27T16:20:07.312Z',
    actorId: '6f1c2d8e-3b4a-4c5d-9e8f-0a1b2c3d4e5f',
    actorName: 'console',
    action: 'key.rotate',
    targetConsumer: 'acme',
    targetKey: '0b6c1f2e-8d3a-4e5f-9a7b-1c2d3e4f5a6b',
    targetToken: null,
    targetKeyHint: 'petk_F7WF…',
    changes: {
      expiresAt: { before: null, after: '2026-11-28T16:20:07.310Z' },
      replacedBy: { before: null, after: '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a' },
      successorHint: { before: null, after: 'petk_Q2mX…' },
    },
    requestId: 'b7e0f6a2-1c3d-4e5f-8a9b-0c1d2e3f4a5b',
    source: '127.0.0.1',
    onBehalfOf: 'operator:alice',
    endUserAddress: '198.51.100.4',
    count: 1,
    aggregated: false,
  },
  {
    id: '1072',
    at: '2026-11-27T16:21:02.118Z',
    actorId: null,
    actorName: 'anonymous',
    action: 'auth.unauthorized',
    targetConsumer: null,
    targetKey: null,
    targetToken: null,
    targetKeyHint: null,
    changes: {
      minute: { before: null, after: '2026-11-27T16:21:00.000Z' },
      route: { before: null, after: 'GET /consumers' },
    },
    requestId: null,
    source: '203.0.113.9',
    onBehalfOf: null,
    endUserAddress: null,
    count: 970,
    aggregated: true,
  },
];

export class AuditPageResponse {
  @ApiProperty({ type: [AuditEntryResponse], example: AUDIT_PAGE_EXAMPLE }) items!: AuditEntryResponse[];
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Pass as `after` for the next page; null on the last page.',
  })
  next!: string | null;
}

export function toAuditEntryResponse(e: AuditEntryEntity): AuditEntryResponse {
  return {
    id: String(e.id),
    at: e.at.toISOString(),
    actorId: e.actorId,
    actorName: e.actorName,
    action: e.action,
    targetConsumer: e.targetConsumer,
    targetKey: e.targetKey,
    targetToken: e.targetToken,
    targetKeyHint: e.targetKeyHint,
    changes: e.changes,
    requestId: e.requestId,
    source: e.source,
    onBehalfOf: e.onBehalfOf,
    endUserAddress: e.endUserAddress,
    count: e.count,
    aggregated: e.aggregateKey !== null && e.aggregateKey !== undefined,
  };
}
