import { IsIntegerInRange, IsPlainText, ParseDecimalInteger } from '@app/contract';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { PAGE_SIZE } from '../../../admin-conventions/page-size';
import { ConsumerParams } from '../../../consumers/admin/dto/consumer-params.dto';
import { DEFAULT_OVERLAP_SECONDS, MAX_OVERLAP_SECONDS } from '../../../consumers/admin/dto/issue-key.dto';
import { DeliveryWithAttempts, FailingEndpoint } from '../../webhook-endpoints.service';
import { maskSecret, WEBHOOK_EVENT_TYPES, webhookIdOf } from '../../webhook-events';
import { DELIVERY_STATES, WebhookEndpointRow } from '../../webhook-tables';

export const URL_MAX = 2048;
export const DESCRIPTION_MAX = 200;
export const URL_RULE = 'url must be an absolute http: or https: URL';
export const EVENT_TYPES_RULE = `each event type must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}`;

export const EXAMPLE_ENDPOINT_ID = '5d2b7c1e-8f3a-4b6d-9e0c-1a2b3c4d5e6f';
export const EXAMPLE_DELIVERY_ID = '9c8b7a6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
export const EXAMPLE_MESSAGE_ID = '2f4e6d8c-0b1a-4c3e-9d5f-7a9b1c3d5e7f';
const EXAMPLE_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** The rule nearest the property is checked first (stopAtFirstError): the most basic one sits last. */
export class CreateWebhookEndpointDto {
  @ApiProperty({
    example: 'https://hooks.example.com/petstore',
    maxLength: URL_MAX,
    description:
      'Where events are POSTed. Checked now with the outbound policy (no loopback, private, link-local, metadata… address; HTTPS in production) and again at every attempt.',
  })
  @Matches(/^https?:\/\/[^\s]+$/i, { message: URL_RULE })
  @MaxLength(URL_MAX, { message: `url must be at most ${URL_MAX} characters` })
  @IsString({ message: URL_RULE })
  @IsDefined({ message: 'url is required' })
  url!: string;

  @ApiPropertyOptional({ example: 'Billing alerts', maxLength: DESCRIPTION_MAX })
  @IsOptional()
  @IsPlainText()
  @MaxLength(DESCRIPTION_MAX, { message: `description must be at most ${DESCRIPTION_MAX} characters` })
  @IsString({ message: 'description must be a string' })
  description?: string;

  @ApiPropertyOptional({
    enum: WEBHOOK_EVENT_TYPES,
    isArray: true,
    nullable: true,
    example: ['quota.threshold_crossed'],
    description: 'Only these event types; null or absent: every type.',
  })
  @ValidateIf((o: CreateWebhookEndpointDto) => o.eventTypes !== null && o.eventTypes !== undefined)
  @IsIn(WEBHOOK_EVENT_TYPES, { each: true, message: EVENT_TYPES_RULE })
  @ArrayUnique({ message: 'eventTypes must not repeat a type' })
  @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length, { message: 'eventTypes must not repeat a type' })
  @ArrayMinSize(1, { message: 'eventTypes must name at least one type (null: every type)' })
  @IsArray({ message: 'eventTypes must be an array or null' })
  eventTypes?: string[] | null;
}

export class UpdateWebhookEndpointDto {
  @ApiPropertyOptional({ example: 'https://hooks.example.com/petstore/v2', maxLength: URL_MAX })
  @IsOptional()
  @Matches(/^https?:\/\/[^\s]+$/i, { message: URL_RULE })
  @MaxLength(URL_MAX, { message: `url must be at most ${URL_MAX} characters` })
  @IsString({ message: URL_RULE })
  url?: string;

  @ApiPropertyOptional({ example: 'Billing alerts', maxLength: DESCRIPTION_MAX })
  @IsOptional()
  @IsPlainText()
  @MaxLength(DESCRIPTION_MAX, { message: `description must be at most ${DESCRIPTION_MAX} characters` })
  @IsString({ message: 'description must be a string' })
  description?: string;

  @ApiPropertyOptional({ enum: WEBHOOK_EVENT_TYPES, isArray: true, nullable: true, example: null })
  @ValidateIf((o: UpdateWebhookEndpointDto) => o.eventTypes !== null && o.eventTypes !== undefined)
  @IsIn(WEBHOOK_EVENT_TYPES, { each: true, message: EVENT_TYPES_RULE })
  @ArrayUnique({ message: 'eventTypes must not repeat a type' })
  @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length, { message: 'eventTypes must not repeat a type' })
  @ArrayMinSize(1, { message: 'eventTypes must name at least one type (null: every type)' })
  @IsArray({ message: 'eventTypes must be an array or null' })
  eventTypes?: string[] | null;

  @ApiPropertyOptional({
    example: true,
    description:
      'false disables the endpoint (nothing is delivered to it); true enables it again, its failure span starting over.',
  })
  @IsOptional()
  @IsBoolean({ message: 'enabled must be true or false' })
  enabled?: boolean;
}

/** The path of one of a consumer's endpoints. */
export class WebhookEndpointParams extends ConsumerParams {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all', { message: 'id must be a UUID' })
  id!: string;
}

/** The path of a fleet-wide endpoint. */
export class WebhookIdParams {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all', { message: 'id must be a UUID' })
  id!: string;
}

const DELIVERY_ID_RULE = 'deliveryId must be a UUID';

/** The path of a delivery to one of a consumer's endpoints. */
export class WebhookDeliveryParams extends WebhookEndpointParams {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all', { message: DELIVERY_ID_RULE })
  deliveryId!: string;
}

/** The path of a delivery to a fleet-wide endpoint. */
export class FleetWebhookDeliveryParams extends WebhookIdParams {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all', { message: DELIVERY_ID_RULE })
  deliveryId!: string;
}

export class ListWebhookDeliveriesQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: PAGE_SIZE.min, maximum: PAGE_SIZE.max, default: PAGE_SIZE.default })
  @IsOptional()
  @ParseDecimalInteger()
  @IsIntegerInRange(PAGE_SIZE.min, PAGE_SIZE.max)
  limit?: number;

  @ApiPropertyOptional({ format: 'uuid', description: 'The `next` of the previous page.' })
  @IsOptional()
  @IsUUID('all', { message: 'after must be the next of a previous page' })
  after?: string;
}

export class WebhookEndpointResponse {
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ENDPOINT_ID }) id!: string;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'acme',
    description: "The consumer whose events it gets; null: an operator's fleet-wide endpoint (every consumer's).",
  })
  consumer!: string | null;
  @ApiProperty({ example: 'https://hooks.example.com/petstore' }) url!: string;
  @ApiProperty({ example: 'Billing alerts' }) description!: string;
  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES, isArray: true, nullable: true, example: null }) eventTypes!:
    string[] | null;
  @ApiProperty({
    example: 'whsec_…aSw=',
    description:
      "The signing secret (Standard Webhooks' `whsec_…`): in full only in the answers of create and rotate-secret; masked everywhere else.",
  })
  secret!: string;
  @ApiProperty({ example: true }) enabled!: boolean;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: null }) disabledAt!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description: 'Why it was disabled: by whom, or since when every delivery failed.',
  })
  disabledReason!: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    example: null,
    description: 'The first failed attempt since the last success; null: not failing.',
  })
  failingSince!: string | null;
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    example: null,
    description:
      'Until when the secret the last rotation replaced signs beside this one (both signatures on each delivery); a time past: it no longer does; null: the last rotation had no overlap, or there was none.',
  })
  previousSecretSignsUntil!: string | null;
}

/** The overlap of a secret rotation: the same bounds and default as a key's (a migration window, a week at most). */
export class RotateWebhookSecretDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_OVERLAP_SECONDS,
    default: DEFAULT_OVERLAP_SECONDS,
    description:
      'How long the old secret keeps signing beside the new one (each delivery then carries both signatures, so the receiver can switch without losing one); 0: it stops now (a leaked secret).',
  })
  @IsOptional()
  @Max(MAX_OVERLAP_SECONDS, { message: `overlapSeconds must be at most ${MAX_OVERLAP_SECONDS}` })
  @Min(0, { message: 'overlapSeconds must be at least 0' })
  // Nearest the property, checked first (stopAtFirstError): "3600" is not an integer, not "too large".
  @IsInt({ message: 'overlapSeconds must be an integer' })
  overlapSeconds?: number;
}

export class CreatedWebhookEndpointResponse extends WebhookEndpointResponse {
  @ApiProperty({ example: EXAMPLE_SECRET, description: 'The signing secret in full: shown this once.' })
  declare secret: string;
}

export class WebhookEndpointListResponse {
  @ApiProperty({ type: [WebhookEndpointResponse] }) items!: WebhookEndpointResponse[];
}

/** A failing or disabled endpoint, with its newest attempt (the console's list: no read of each one's deliveries). */
export class FailingWebhookEndpointResponse extends WebhookEndpointResponse {
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'HTTP 503',
    description: "The newest attempt's error (any of its deliveries); null: none yet, or it had none.",
  })
  lastError!: string | null;
  @ApiProperty({
    nullable: true,
    type: 'integer',
    example: 503,
    description: "The newest attempt's status; null: no answer, or no attempt yet.",
  })
  lastStatus!: number | null;
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'The newest attempt; null: none yet.',
  })
  lastAttemptAt!: string | null;
}

export class FailingWebhookEndpointListResponse {
  @ApiProperty({ type: [FailingWebhookEndpointResponse] }) items!: FailingWebhookEndpointResponse[];
}

export class WebhookAttemptResponse {
  @ApiProperty({ example: 1, description: '1 for the first attempt.' }) attempt!: number;
  @ApiProperty({ format: 'date-time' }) at!: string;
  @ApiProperty({
    nullable: true,
    type: 'integer',
    example: 503,
    description: "The receiver's status; null: no answer.",
  })
  statusCode!: number | null;
  @ApiProperty({ example: 142 }) latencyMs!: number;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'HTTP 503',
    description: 'Why it failed (500 characters at most).',
  })
  error!: string | null;
}

export class WebhookDeliveryResponse {
  @ApiProperty({ format: 'uuid', example: EXAMPLE_DELIVERY_ID }) id!: string;
  @ApiProperty({
    example: `msg_${EXAMPLE_MESSAGE_ID}`,
    description: 'The `webhook-id` header of every attempt of this message, to every endpoint, redeliveries included.',
  })
  webhookId!: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String, example: EXAMPLE_ENDPOINT_ID }) endpointId!:
    string | null;
  @ApiProperty({ example: 'acme' }) consumer!: string;
  @ApiProperty({ example: 'quota.threshold_crossed' }) eventType!: string;
  @ApiProperty({ enum: DELIVERY_STATES, description: '`failed`: every attempt of the schedule failed (given up).' })
  state!: string;
  @ApiProperty({ example: 1 }) attemptCount!: number;
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'The next attempt; null once delivered or given up.',
  })
  nextAttemptAt!: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) deliveredAt!: string | null;
  @ApiProperty({ type: [WebhookAttemptResponse] }) attempts!: WebhookAttemptResponse[];
}

export class WebhookDeliveryPageResponse {
  @ApiProperty({ type: [WebhookDeliveryResponse] }) items!: WebhookDeliveryResponse[];
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Pass as `after` for the next page; null on the last page.',
  })
  next!: string | null;
}

export function toEndpointResponse(row: WebhookEndpointRow, showSecret = false): WebhookEndpointResponse {
  return {
    id: row.id,
    consumer: row.consumer,
    url: row.url,
    description: row.description,
    eventTypes: row.event_types,
    secret: showSecret ? row.secret : maskSecret(row.secret),
    enabled: row.enabled,
    disabledAt: row.disabled_at?.toISOString() ?? null,
    disabledReason: row.disabled_reason,
    createdAt: row.created_at.toISOString(),
    failingSince: row.failing_since?.toISOString() ?? null,
    previousSecretSignsUntil: row.previous_secret_until?.toISOString() ?? null,
  };
}

export function toFailingEndpointResponse({ endpoint, last }: FailingEndpoint): FailingWebhookEndpointResponse {
  return {
    ...toEndpointResponse(endpoint),
    lastError: last.last_error,
    lastStatus: last.last_status,
    lastAttemptAt: last.last_attempt_at ? new Date(last.last_attempt_at).toISOString() : null,
  };
}

export function toDeliveryResponse(d: DeliveryWithAttempts): WebhookDeliveryResponse {
  return {
    id: d.id,
    webhookId: webhookIdOf(d.message_id),
    endpointId: d.endpoint_id,
    consumer: d.consumer,
    eventType: d.kind,
    state: d.state,
    attemptCount: d.attempts,
    nextAttemptAt: d.state === 'pending' ? new Date(d.next_attempt_at).toISOString() : null,
    createdAt: new Date(d.created_at).toISOString(),
    deliveredAt: d.delivered_at ? new Date(d.delivered_at).toISOString() : null,
    attempts: d.attemptRows.map((a) => ({
      attempt: a.attempt,
      at: new Date(a.at).toISOString(),
      statusCode: a.status_code,
      latencyMs: a.latency_ms,
      error: a.error,
    })),
  };
}
