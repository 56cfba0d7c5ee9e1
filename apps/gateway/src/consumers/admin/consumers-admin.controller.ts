import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { dateTimeOf, EMAIL_ADDRESS_RULE } from '@app/contract';
import { ApiError } from '@app/errors';
import { AdminRequestContext } from '../../access/admin-context';
import { Clock } from '../../clock';
import { limitsOf } from '../consumer';
import { ConsumerKeysService } from '../consumer-keys.service';
import { ConsumerWithKeys } from '../consumer.repository';
import { ConsumersService } from '../consumers.service';
import { ConsumersFileService } from '../consumers-file.service';
import { PLAN_NAMES } from '../../plans/plans';
import { PlanLimits } from '../../plans/plan-limits';
import { AdminCall } from '../../access/admin-call.decorator';
import { ADMIN_TAG } from '../../admin-conventions/admin-tags';
import {
  AdminErrors,
  AdminExample,
  EXAMPLE_CONSUMER,
  EXAMPLE_KEY_ID,
  EXAMPLE_SUCCESSOR_ID,
  MALFORMED_BODY,
  NO_SUCH_KEY,
  notFound,
} from '../../admin-conventions/admin-responses';
import { BAN_STORE_UNAVAILABLE_MESSAGE, ConsumerRateLimitService } from './consumer-rate-limit.service';
import { CONSUMER_NAME_RULE } from '../consumer-name';
import { AdminOperation } from '../../access/admin-operation.decorator';
import { ConsumerKeyParams, ConsumerParams } from './dto/consumer-params.dto';
import { CreateConsumerDto } from './dto/create-consumer.dto';
import {
  ConsumerPageResponse,
  ConsumerResponse,
  CreatedConsumerResponse,
  ExportPageResponse,
  ImportResponse,
  IssuedKeyResponse,
  KeyResponse,
  RotatedKeyResponse,
  UsageResponse,
  toConsumerResponse,
  toIssuedKeyResponse,
  toKeyResponse,
} from './dto/consumer.response';
import { IMPORT_BATCH_MAX, ImportConsumersDto } from './dto/import-consumers.dto';
import { DEFAULT_OVERLAP_SECONDS, IssueKeyDto, MAX_OVERLAP_SECONDS, RotateKeyDto } from './dto/issue-key.dto';
import { PAGE_SIZE } from '../../admin-conventions/page-size';
import { ListConsumersQueryDto } from './dto/list-consumers.query.dto';
import { UpdateConsumerDto } from './dto/update-consumer.dto';
import { UpdateCredentialDto } from './dto/allowed-addresses.dto';
import { ALLOWED_ADDRESSES_RULE } from '../allowed-addresses';

/** The 400s the routes share: a path name that cannot be a consumer's, a page query out of range, a bad body. */
const BAD_NAME: AdminExample = ['VALIDATION_FAILED', `name must be ${CONSUMER_NAME_RULE}`];
const BAD_KEY_ID: AdminExample = ['VALIDATION_FAILED', 'keyId must be a UUID'];
const BAD_PAGE: AdminExample[] = [
  ['VALIDATION_FAILED', `limit must be an integer from ${PAGE_SIZE.min} to ${PAGE_SIZE.max}`],
  ['VALIDATION_FAILED', `after must be ${CONSUMER_NAME_RULE}`],
];
/** A route without a body still parses one that is sent: JSON, or 400. */
const MALFORMED_JSON: AdminExample = MALFORMED_BODY[0];
const BAD_PLAN: AdminExample = ['VALIDATION_FAILED', `plan must be one of ${PLAN_NAMES.join(', ')}`];
const NEEDS_LIMITS: AdminExample = [
  'VALIDATION_FAILED',
  "The enterprise plan needs the consumer's agreed limits (perMinute and perDay).",
];
const BAD_EMAIL: AdminExample = ['VALIDATION_FAILED', `email ${EMAIL_ADDRESS_RULE}`];
const IN_THE_PAST: AdminExample = ['VALIDATION_FAILED', 'expiresAt must be in the future'];

function futureDate(value: string | undefined, now: number): Date | undefined {
  if (value === undefined) return undefined;
  const date = dateTimeOf(value);
  if (date.getTime() <= now) throw new ApiError('VALIDATION_FAILED', 'expiresAt must be in the future');
  return date;
}

/** Consumers and their keys. Thin: validation by DTO, one store call, mapping to the response. */
@ApiTags(ADMIN_TAG)
@ApiBearerAuth('bearer')
@Controller()
export class ConsumersAdminController {
  constructor(
    private readonly consumers: ConsumersService,
    private readonly keys: ConsumerKeysService,
    private readonly file: ConsumersFileService,
    private readonly planLimits: PlanLimits,
    private readonly rateLimits: ConsumerRateLimitService,
    private readonly clock: Clock,
  ) {}

  @Get('consumers')
  @AdminOperation({
    operationId: 'listConsumers',
    summary: 'List consumers, a page at a time',
    description:
      'In name order, each with its keys (hints only); `prefix` keeps the names that start with it, `email` the consumers with that contact address (any case). Pass `next` as `after` for the next page.',
  })
  @ApiOkResponse({ type: ConsumerPageResponse })
  @AdminErrors({ 400: [...BAD_PAGE, BAD_EMAIL] })
  async list(
    @AdminCall() call: AdminRequestContext,
    @Query() query: ListConsumersQueryDto,
  ): Promise<ConsumerPageResponse> {
    const page = await this.consumers.list(
      call.actor,
      query.limit ?? PAGE_SIZE.default,
      query.after,
      query.prefix,
      query.email,
    );
    return { items: page.items.map((item) => this.present(item)), next: page.next };
  }

  @Post('consumers')
  @AdminOperation({
    operationId: 'createConsumer',
    summary: 'Create a consumer and its first key',
    description: 'The key is in this answer only: only its SHA-256 is stored.',
  })
  @ApiCreatedResponse({
    type: CreatedConsumerResponse,
    description: 'The consumer and its first key (shown only here).',
  })
  @AdminErrors({
    400: [
      BAD_PLAN,
      NEEDS_LIMITS,
      ['VALIDATION_FAILED', 'limits.perDay is required'],
      IN_THE_PAST,
      BAD_EMAIL,
      ...MALFORMED_BODY,
    ],
    409: [['CONSUMER_EXISTS', `A consumer named "${EXAMPLE_CONSUMER}" already exists.`]],
  })
  async create(
    @AdminCall() call: AdminRequestContext,
    @Body() body: CreateConsumerDto,
  ): Promise<CreatedConsumerResponse> {
    const { consumer, issued } = await this.consumers.create(call, {
      name: body.name,
      plan: body.plan,
      limits: body.limits,
      expiresAt: futureDate(body.expiresAt, this.clock.now()),
      email: body.email,
    });
    return {
      consumer: this.present({ consumer, keys: [issued.record] }),
      key: toIssuedKeyResponse(issued.key, issued.record, this.clock.now()),
    };
  }

  @Get('consumers/:name')
  @AdminOperation({
    operationId: 'getConsumer',
    summary: 'Read a consumer and its keys',
    description: 'Keys are listed by hint, never the key itself.',
  })
  @ApiOkResponse({ type: ConsumerResponse })
  @AdminErrors({ 400: [BAD_NAME], 404: notFound() })
  async get(@AdminCall() call: AdminRequestContext, @Param() { name }: ConsumerParams): Promise<ConsumerResponse> {
    return this.present(await this.consumers.get(call.actor, name));
  }

  @Patch('consumers/:name')
  @AdminOperation({
    operationId: 'updateConsumer',
    summary: "Change a consumer's plan, limits, contact email or allowed addresses",
    description:
      "`limits: null` clears its own limits: back to the plan's; `email: null` clears the contact address; `allowedAddresses` restricts where its keys and tokens may be used from (null: anywhere). Every instance applies the change at once.",
  })
  @ApiOkResponse({ type: ConsumerResponse })
  @AdminErrors({
    400: [
      BAD_PLAN,
      NEEDS_LIMITS,
      ['VALIDATION_FAILED', 'limits.perMinute must be at least 1'],
      BAD_EMAIL,
      ['VALIDATION_FAILED', ALLOWED_ADDRESSES_RULE],
      BAD_NAME,
      ...MALFORMED_BODY,
    ],
    404: notFound(),
  })
  async update(
    @AdminCall() call: AdminRequestContext,
    @Param() { name }: ConsumerParams,
    @Body() body: UpdateConsumerDto,
  ): Promise<ConsumerResponse> {
    return this.present(
      await this.consumers.update(call, name, {
        plan: body.plan,
        limits: body.limits,
        email: body.email,
        allowedAddresses: body.allowedAddresses,
      }),
    );
  }

  @Post('consumers/:name/disable')
  @HttpCode(200)
  @AdminOperation({
    operationId: 'disableConsumer',
    summary: 'Disable a consumer',
    description: 'Every key of the consumer is refused (401) until it is enabled; the keys are kept.',
  })
  @ApiOkResponse({ type: ConsumerResponse, description: 'Every key of the consumer is refused until it is enabled.' })
  @AdminErrors({ 400: [BAD_NAME, MALFORMED_JSON], 404: notFound() })
  async disable(@AdminCall() call: AdminRequestContext, @Param() { name }: ConsumerParams): Promise<ConsumerResponse> {
    return this.present(await this.consumers.setDisabled(call, name, true));
  }

  @Post('consumers/:name/enable')
  @HttpCode(200)
  @AdminOperation({
    operationId: 'enableConsumer',
    summary: 'Enable a disabled consumer',
    description: 'Its keys that are neither revoked nor expired work again.',
  })
  @ApiOkResponse({ type: ConsumerResponse })
  @AdminErrors({ 400: [BAD_NAME, MALFORMED_JSON], 404: notFound() })
  async enable(@AdminCall() call: AdminRequestContext, @Param() { name }: ConsumerParams): Promise<ConsumerResponse> {
    return this.present(await this.consumers.setDisabled(call, name, false));
  }

  @Post('consumers/:name/keys')
  @AdminOperation({
    operationId: 'issueKey',
    summary: 'Issue another key to a consumer',
    description: "The consumer's other keys keep working. The body is optional.",
  })
  @ApiBody({ type: IssueKeyDto, required: false })
  @ApiCreatedResponse({ type: IssuedKeyResponse, description: 'A new key (shown only here); the others keep working.' })
  @AdminErrors({
    400: [IN_THE_PAST, ['VALIDATION_FAILED', 'expiresAt must be an ISO 8601 date-time'], BAD_NAME, ...MALFORMED_BODY],
    404: notFound(),
    409: [
      [
        'KEY_LIMIT_REACHED',
        `A consumer holds at most 100 active keys (CONSUMER_MAX_KEYS): "${EXAMPLE_CONSUMER}" has 100; revoke some first.`,
      ],
    ],
  })
  async issue(
    @AdminCall() call: AdminRequestContext,
    @Param() { name }: ConsumerParams,
    @Body() body: IssueKeyDto,
  ): Promise<IssuedKeyResponse> {
    const issued = await this.keys.issueKey(call, name, futureDate(body.expiresAt, this.clock.now()));
    return toIssuedKeyResponse(issued.key, issued.record, this.clock.now());
  }

  @Post('consumers/:name/revoke')
  @HttpCode(200)
  @AdminOperation({
    operationId: 'revokeConsumerKeys',
    summary: 'Revoke every key of a consumer',
    description: 'The consumer stays and can be issued new keys. Idempotent: nothing left to revoke answers `[]`.',
  })
  @ApiOkResponse({
    type: [KeyResponse],
    description: 'Revokes every key of the consumer still unrevoked (those keys are listed).',
  })
  @AdminErrors({ 400: [BAD_NAME, MALFORMED_JSON], 404: notFound() })
  async revokeAll(@AdminCall() call: AdminRequestContext, @Param() { name }: ConsumerParams): Promise<KeyResponse[]> {
    return (await this.keys.revoke(call, name)).map((k) => toKeyResponse(k, this.clock.now()));
  }

  @Post('consumers/:name/keys/:keyId/revoke')
  @HttpCode(200)
  @AdminOperation({
    operationId: 'revokeKey',
    summary: 'Revoke one key',
    description: 'Every gateway instance refuses it at once. Idempotent: an already revoked key answers `[]`.',
  })
  @ApiOkResponse({ type: [KeyResponse], description: 'The key, revoked (empty when it already was).' })
  @AdminErrors({ 400: [BAD_KEY_ID, BAD_NAME, MALFORMED_JSON], 404: notFound(NO_SUCH_KEY) })
  async revoke(
    @AdminCall() call: AdminRequestContext,
    @Param() { name, keyId }: ConsumerKeyParams,
  ): Promise<KeyResponse[]> {
    return (await this.keys.revoke(call, name, keyId)).map((k) => toKeyResponse(k, this.clock.now()));
  }

  @Post('consumers/:name/keys/:keyId/rotate')
  @AdminOperation({
    operationId: 'rotateKey',
    summary: 'Rotate a key: a new key now, the old one after an overlap',
    description: `The old key keeps working for \`overlapSeconds\` (default ${DEFAULT_OVERLAP_SECONDS}, at most ${MAX_OVERLAP_SECONDS}), never longer than it already would. A key is rotated once. The body is optional.`,
  })
  @ApiBody({ type: RotateKeyDto, required: false })
  @ApiCreatedResponse({
    type: RotatedKeyResponse,
    description: 'A new key now; the old one expires after the overlap.',
  })
  @AdminErrors({
    400: [
      ['VALIDATION_FAILED', `overlapSeconds must be at most ${MAX_OVERLAP_SECONDS}`],
      BAD_KEY_ID,
      ...MALFORMED_BODY,
    ],
    404: notFound(NO_SUCH_KEY),
    409: [
      [
        'KEY_ALREADY_ROTATED',
        `Key ${EXAMPLE_KEY_ID} was already rotated: its successor is key ${EXAMPLE_SUCCESSOR_ID} (rotate that one instead).`,
      ],
      ['KEY_REVOKED', `Key ${EXAMPLE_KEY_ID} is revoked: issue a new key instead.`],
      ['KEY_EXPIRED', `Key ${EXAMPLE_KEY_ID} has expired: issue a new key instead.`],
      [
        'KEY_LIMIT_REACHED',
        `A consumer holds at most 100 active keys (CONSUMER_MAX_KEYS): "${EXAMPLE_CONSUMER}" has 100; revoke some first.`,
      ],
    ],
  })
  async rotate(
    @AdminCall() call: AdminRequestContext,
    @Param() { name, keyId }: ConsumerKeyParams,
    @Body() body: RotateKeyDto,
  ): Promise<RotatedKeyResponse> {
    const { issued, previous } = await this.keys.rotate(
      call,
      name,
      keyId,
      (body.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS) * 1000,
    );
    return {
      key: toIssuedKeyResponse(issued.key, issued.record, this.clock.now()),
      previous: toKeyResponse(previous, this.clock.now()),
    };
  }

  @Patch('consumers/:name/keys/:keyId')
  @AdminOperation({
    operationId: 'updateKey',
    summary: 'Restrict where one key may be used from',
    description:
      "`allowedAddresses`: the addresses and CIDR ranges its requests may come from, within its consumer's own (null: anywhere the consumer allows). A request from elsewhere gets 403 ADDRESS_NOT_ALLOWED, counted against its address's anonymous limit (as a bad key is), never on the consumer. Every instance applies it at once; a rotation's successor keeps it.",
  })
  @ApiOkResponse({ type: KeyResponse, description: 'The key, as changed.' })
  @AdminErrors({
    400: [['VALIDATION_FAILED', ALLOWED_ADDRESSES_RULE], BAD_KEY_ID, ...MALFORMED_BODY],
    404: notFound(NO_SUCH_KEY),
  })
  async updateKey(
    @AdminCall() call: AdminRequestContext,
    @Param() { name, keyId }: ConsumerKeyParams,
    @Body() body: UpdateCredentialDto,
  ): Promise<KeyResponse> {
    const key = await this.keys.setAllowedAddresses(call, name, keyId, body.allowedAddresses);
    return toKeyResponse(key, this.clock.now());
  }

  @Get('consumers/:name/usage')
  @AdminOperation({
    operationId: 'getConsumerUsage',
    summary: "Read a consumer's current rate-limit usage",
    description: 'Minute and day counts, remaining, reset and ban, read from the rate-limit store: nothing is counted.',
  })
  @ApiOkResponse({ type: UsageResponse, description: 'Current window counts and ban, read from the rate-limit store.' })
  @AdminErrors({ 400: [BAD_NAME], 404: notFound() })
  usage(@AdminCall() call: AdminRequestContext, @Param() { name }: ConsumerParams): Promise<UsageResponse> {
    return this.rateLimits.usage(call.actor, name);
  }

  @Post('consumers/:name/unban')
  @HttpCode(200)
  @AdminOperation({
    operationId: 'unbanConsumer',
    summary: "Lift a consumer's ban",
    description: 'On every instance: the ban and the strikes are forgotten, the windows keep counting.',
  })
  @ApiOkResponse({
    type: UsageResponse,
    description:
      'The ban is lifted and the strikes forgotten on every instance (the windows keep counting); then the usage.',
  })
  @AdminErrors({
    400: [BAD_NAME, MALFORMED_JSON],
    404: notFound(),
    503: {
      description:
        'The consumers database, or Redis where the ban lives, cannot be reached (`SERVICE_UNAVAILABLE`): nothing was changed; retry after `Retry-After`.',
      examples: [['SERVICE_UNAVAILABLE', BAN_STORE_UNAVAILABLE_MESSAGE]],
    },
  })
  unban(@AdminCall() call: AdminRequestContext, @Param() { name }: ConsumerParams): Promise<UsageResponse> {
    return this.rateLimits.unban(call, name);
  }

  @Post('import')
  @HttpCode(200)
  @AdminOperation({
    operationId: 'importConsumers',
    summary: 'Import consumers (the consumers-file format)',
    description: `Idempotent: consumers matched by name, keys by hash; at most ${IMPORT_BATCH_MAX} consumers per request, one transaction (a refused entry refuses the batch).`,
  })
  @ApiOkResponse({ type: ImportResponse, description: 'Idempotent: consumers matched by name, keys by hash.' })
  @AdminErrors({
    400: [
      ['VALIDATION_FAILED', 'consumers is required'],
      ['VALIDATION_FAILED', `consumers takes at most ${IMPORT_BATCH_MAX} entries per request`],
      ['VALIDATION_FAILED', 'consumers.0.keys.0.keyHash must be a SHA-256 hex digest'],
      ...MALFORMED_BODY,
    ],
    409: [
      ['KEY_OF_ANOTHER_CONSUMER', `Key petk_AbCd… of "${EXAMPLE_CONSUMER}" belongs to another consumer.`],
      [
        'KEY_LIMIT_REACHED',
        `A consumer holds at most 100 active keys (CONSUMER_MAX_KEYS): "${EXAMPLE_CONSUMER}" has 101; revoke some first.`,
      ],
    ],
  })
  import(@AdminCall() call: AdminRequestContext, @Body() body: ImportConsumersDto): Promise<ImportResponse> {
    return this.file.import(call, body.consumers);
  }

  @Get('export')
  @AdminOperation({
    operationId: 'exportConsumers',
    summary: 'Export consumers (the consumers-file format), a page at a time',
    description: 'Every field, key hashes only: imports back as it was.',
  })
  @ApiOkResponse({ type: ExportPageResponse, description: 'One page of the consumers-file format.' })
  @AdminErrors({ 400: BAD_PAGE })
  export(@AdminCall() call: AdminRequestContext, @Query() query: ListConsumersQueryDto): Promise<ExportPageResponse> {
    return this.file.export(call.actor, query.limit ?? PAGE_SIZE.default, query.after);
  }

  private present(item: ConsumerWithKeys): ConsumerResponse {
    return toConsumerResponse(
      item,
      this.planLimits.effective({ plan: item.consumer.plan, limits: limitsOf(item.consumer) }),
      this.clock.now(),
    );
  }
}
