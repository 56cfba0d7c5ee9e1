import { ErrorDto } from '@app/contract';
import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ApiError } from '@app/errors';
import { ConsumerRepository, ConsumerWithKeys, limitsOf } from '../consumers/consumer.repository';
import { ConsumersFile } from '../consumers/consumers-file.service';
import { PlanLimits } from '../plans/plan-limits';
import { ConsumerRateLimitService } from './consumer-rate-limit.service';
import { RequireScope } from './require-scope.decorator';
import { ConsumerKeyParams, ConsumerParams } from './dto/consumer-params.dto';
import { CreateConsumerDto } from './dto/create-consumer.dto';
import {
  ConsumerPageResponse,
  ConsumerResponse,
  CreatedConsumerResponse,
  ImportResponse,
  IssuedKeyResponse,
  KeyResponse,
  RotatedKeyResponse,
  UsageResponse,
  toConsumerResponse,
  toIssuedKeyResponse,
  toKeyResponse,
} from './dto/consumer.response';
import { ImportConsumersDto } from './dto/import-consumers.dto';
import { DEFAULT_OVERLAP_SECONDS, IssueKeyDto, RotateKeyDto } from './dto/issue-key.dto';
import { ListConsumersQueryDto, PAGE_SIZE } from './dto/list-consumers.query.dto';
import { UpdateConsumerDto } from './dto/update-consumer.dto';

function futureDate(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (date.getTime() <= Date.now()) throw new ApiError('VALIDATION_FAILED', 'expiresAt must be in the future');
  return date;
}

/** Consumers and their keys. Thin: validation by DTO, one store call, mapping to the response. */
@ApiTags('consumers')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorDto, description: 'Missing or wrong ADMIN_TOKEN.' })
@ApiBadRequestResponse({ type: ErrorDto, description: 'Invalid input (VALIDATION_FAILED, MALFORMED_JSON).' })
@Controller()
export class ConsumersAdminController {
  constructor(
    private readonly store: ConsumerRepository,
    private readonly file: ConsumersFile,
    private readonly planLimits: PlanLimits,
    private readonly rateLimits: ConsumerRateLimitService,
  ) {}

  @RequireScope('consumers:read')
  @Get('consumers')
  @ApiOkResponse({ type: ConsumerPageResponse })
  async list(@Query() query: ListConsumersQueryDto): Promise<ConsumerPageResponse> {
    const page = await this.store.list(query.limit ?? PAGE_SIZE.default, query.after);
    return { items: page.items.map((item) => this.present(item)), next: page.next };
  }

  @RequireScope('consumers:write')
  @Post('consumers')
  @ApiCreatedResponse({ type: CreatedConsumerResponse, description: 'The consumer and its first key (shown only here).' })
  async create(@Body() body: CreateConsumerDto): Promise<CreatedConsumerResponse> {
    const { consumer, issued } = await this.store.create({ name: body.name, plan: body.plan, limits: body.limits, expiresAt: futureDate(body.expiresAt) });
    return { consumer: this.present({ consumer, keys: [issued.record] }), key: toIssuedKeyResponse(issued.key, issued.record) };
  }

  @RequireScope('consumers:read')
  @Get('consumers/:name')
  @ApiOkResponse({ type: ConsumerResponse })
  @ApiNotFoundResponse({ type: ErrorDto })
  async get(@Param() { name }: ConsumerParams): Promise<ConsumerResponse> {
    return this.present(await this.store.get(name));
  }

  @RequireScope('consumers:write')
  @Patch('consumers/:name')
  @ApiOkResponse({ type: ConsumerResponse })
  @ApiNotFoundResponse({ type: ErrorDto })
  async update(@Param() { name }: ConsumerParams, @Body() body: UpdateConsumerDto): Promise<ConsumerResponse> {
    return this.present(await this.store.update(name, { plan: body.plan, limits: body.limits }));
  }

  @RequireScope('consumers:write')
  @Post('consumers/:name/disable')
  @HttpCode(200)
  @ApiOkResponse({ type: ConsumerResponse, description: 'Every key of the consumer is refused until it is enabled.' })
  @ApiNotFoundResponse({ type: ErrorDto })
  async disable(@Param() { name }: ConsumerParams): Promise<ConsumerResponse> {
    return this.present(await this.store.setDisabled(name, true));
  }

  @RequireScope('consumers:write')
  @Post('consumers/:name/enable')
  @HttpCode(200)
  @ApiOkResponse({ type: ConsumerResponse })
  @ApiNotFoundResponse({ type: ErrorDto })
  async enable(@Param() { name }: ConsumerParams): Promise<ConsumerResponse> {
    return this.present(await this.store.setDisabled(name, false));
  }

  @RequireScope('keys:write')
  @Post('consumers/:name/keys')
  @ApiCreatedResponse({ type: IssuedKeyResponse, description: 'A new key (shown only here); the others keep working.' })
  @ApiNotFoundResponse({ type: ErrorDto })
  async issue(@Param() { name }: ConsumerParams, @Body() body: IssueKeyDto): Promise<IssuedKeyResponse> {
    const issued = await this.store.issueKey(name, futureDate(body.expiresAt));
    return toIssuedKeyResponse(issued.key, issued.record);
  }

  @RequireScope('keys:write')
  @Post('consumers/:name/revoke')
  @HttpCode(200)
  @ApiOkResponse({ type: [KeyResponse], description: 'Revokes every key of the consumer still unrevoked (those keys are listed).' })
  @ApiNotFoundResponse({ type: ErrorDto })
  async revokeAll(@Param() { name }: ConsumerParams): Promise<KeyResponse[]> {
    return (await this.store.revoke(name)).map((k) => toKeyResponse(k));
  }

  @RequireScope('keys:write')
  @Post('consumers/:name/keys/:keyId/revoke')
  @HttpCode(200)
  @ApiOkResponse({ type: [KeyResponse], description: 'The key, revoked (empty when it already was).' })
  @ApiNotFoundResponse({ type: ErrorDto })
  async revoke(@Param() { name, keyId }: ConsumerKeyParams): Promise<KeyResponse[]> {
    return (await this.store.revoke(name, keyId)).map((k) => toKeyResponse(k));
  }

  @RequireScope('keys:write')
  @Post('consumers/:name/keys/:keyId/rotate')
  @ApiCreatedResponse({ type: RotatedKeyResponse, description: 'A new key now; the old one expires after the overlap.' })
  @ApiNotFoundResponse({ type: ErrorDto })
  async rotate(@Param() { name, keyId }: ConsumerKeyParams, @Body() body: RotateKeyDto): Promise<RotatedKeyResponse> {
    const { issued, previous } = await this.store.rotate(name, keyId, (body.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS) * 1000);
    return { key: toIssuedKeyResponse(issued.key, issued.record), previous: toKeyResponse(previous) };
  }

  @RequireScope('usage:read')
  @Get('consumers/:name/usage')
  @ApiOkResponse({ type: UsageResponse, description: 'Current window counts and ban, read from the rate-limit store.' })
  @ApiNotFoundResponse({ type: ErrorDto })
  usage(@Param() { name }: ConsumerParams): Promise<UsageResponse> {
    return this.rateLimits.usage(name);
  }

  @RequireScope('consumers:write')
  @Post('consumers/:name/unban')
  @HttpCode(200)
  @ApiOkResponse({ type: UsageResponse, description: 'The ban is lifted and the strikes forgotten on every instance (the windows keep counting); then the usage.' })
  @ApiNotFoundResponse({ type: ErrorDto })
  @ApiServiceUnavailableResponse({ type: ErrorDto, description: 'Redis, where the ban lives, cannot be reached: retry after Retry-After.' })
  unban(@Param() { name }: ConsumerParams): Promise<UsageResponse> {
    return this.rateLimits.unban(name);
  }

  @RequireScope('import')
  @Post('import')
  @HttpCode(200)
  @ApiOkResponse({ type: ImportResponse, description: 'Idempotent: consumers matched by name, keys by hash.' })
  import(@Body() body: ImportConsumersDto): Promise<ImportResponse> {
    return this.file.import(body.consumers);
  }

  @RequireScope('export')
  @Get('export')
  @ApiOkResponse({ description: 'One page of the consumers-file format: {"consumers": [...], "next": name | null}.' })
  export(@Query() query: ListConsumersQueryDto) {
    return this.file.export(query.limit ?? PAGE_SIZE.default, query.after);
  }

  private present(item: ConsumerWithKeys): ConsumerResponse {
    return toConsumerResponse(item, this.planLimits.effective({ plan: item.consumer.plan, limits: limitsOf(item.consumer) }));
  }
}
