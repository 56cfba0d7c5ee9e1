import { ErrorDto } from '@app/contract';
import { ApiError } from '@app/errors';
import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { AdminTokens } from '../consumers/admin-tokens.repository';
import { AuditLog } from '../consumers/audit-log';
import { AdminTokenParams, AdminTokenResponse, CreateAdminTokenDto, CreatedAdminTokenResponse, toAdminTokenResponse } from './dto/admin-token.dto';
import { AuditPageResponse, ListAuditQueryDto, toAuditEntryResponse } from './dto/audit.dto';
import { PAGE_SIZE } from './dto/list-consumers.query.dto';
import { RequireScope } from './require-scope.decorator';

/** Scoped admin tokens and the audit log (issue #24). */
@ApiTags('tokens')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorDto, description: 'Missing, wrong, expired or revoked token.' })
@Controller()
export class TokensAdminController {
  constructor(
    private readonly tokens: AdminTokens,
    private readonly audit: AuditLog,
  ) {}

  @RequireScope('tokens:admin')
  @Post('tokens')
  @ApiCreatedResponse({ type: CreatedAdminTokenResponse, description: 'The token (shown only here) and its record.' })
  async create(@Body() body: CreateAdminTokenDto): Promise<CreatedAdminTokenResponse> {
    const expiresAt = body.expiresAt === undefined ? undefined : new Date(body.expiresAt);
    if (expiresAt && expiresAt.getTime() <= Date.now()) throw new ApiError('VALIDATION_FAILED', 'expiresAt must be in the future');
    const { token, record } = await this.tokens.create({ ...body, expiresAt });
    return { token, record: toAdminTokenResponse(record) };
  }

  @RequireScope('tokens:admin')
  @Get('tokens')
  @ApiOkResponse({ type: [AdminTokenResponse], description: 'Every token, revoked and expired ones included; never a secret.' })
  async list(): Promise<AdminTokenResponse[]> {
    return (await this.tokens.list()).map(toAdminTokenResponse);
  }

  @RequireScope('tokens:admin')
  @Post('tokens/:id/revoke')
  @HttpCode(200)
  @ApiOkResponse({ type: AdminTokenResponse, description: 'Refused by every instance within a second. Idempotent.' })
  @ApiNotFoundResponse({ type: ErrorDto })
  async revoke(@Param() { id }: AdminTokenParams): Promise<AdminTokenResponse> {
    return toAdminTokenResponse(await this.tokens.revoke(id));
  }

  @RequireScope('audit:read')
  @Get('audit')
  @ApiOkResponse({ type: AuditPageResponse, description: 'The audit log, oldest first, paged like /consumers.' })
  async auditLog(@Query() query: ListAuditQueryDto): Promise<AuditPageResponse> {
    const page = await this.audit.list({
      from: query.from === undefined ? undefined : new Date(query.from),
      to: query.to === undefined ? undefined : new Date(query.to),
      actor: query.actor,
      target: query.target,
      action: query.action,
      limit: query.limit ?? PAGE_SIZE.default,
      after: query.after,
    });
    return { items: page.items.map(toAuditEntryResponse), next: page.next };
  }
}
