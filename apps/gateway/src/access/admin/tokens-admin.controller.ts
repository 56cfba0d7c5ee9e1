import { dateTimeOf } from '@app/contract';
import { ApiError } from '@app/errors';
import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Clock } from '../../clock';
import { AdminTokensService } from '../admin-tokens.service';
import { AuditLog } from '../audit-log';
import {
  AdminTokenParams,
  AdminTokenResponse,
  CreateAdminTokenDto,
  CreatedAdminTokenResponse,
  CurrentTokenResponse,
  toAdminTokenResponse,
} from './dto/admin-token.dto';
import { AdminRequestContext } from '../admin-context';
import { AuditPageResponse, ListAuditQueryDto, toAuditEntryResponse } from './dto/audit.dto';
import { PAGE_SIZE } from '../../admin-conventions/page-size';
import { AdminCall } from '../admin-call.decorator';
import { TOKENS_TAG } from '../../admin-conventions/admin-tags';
import { AdminErrors, AdminExample, EXAMPLE_KEY_ID, MALFORMED_BODY } from '../../admin-conventions/admin-responses';
import { ADMIN_SCOPES } from '../admin-scopes';
import { AdminOperation } from '../admin-operation.decorator';
import { consumerFilter } from '../admin-policy';
import { RecordAuditEventDto, UNKNOWN_KIND_MESSAGE } from './dto/audit-event.dto';

const BAD_SCOPE: AdminExample = ['VALIDATION_FAILED', `each scope must be one of ${ADMIN_SCOPES.join(', ')}`];
const PAST_EXPIRY: AdminExample = ['VALIDATION_FAILED', 'expiresAt must be in the future'];

/** Scoped admin tokens and the audit log (issue #24). */
@ApiTags(TOKENS_TAG)
@ApiBearerAuth('bearer')
@Controller()
export class TokensAdminController {
  constructor(
    private readonly tokens: AdminTokensService,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  @Get('token')
  @AdminOperation({
    operationId: 'getCurrentToken',
    summary: "Read the calling token's own record (who am I)",
    description:
      'The token that makes the call: its id, name, scopes, restrictions and expiry (root: name "root", every scope). What a console signs in with.',
  })
  @ApiOkResponse({ type: CurrentTokenResponse, description: 'The calling token; never a secret.' })
  current(@AdminCall() { actor }: AdminRequestContext): CurrentTokenResponse {
    return {
      id: actor.id,
      name: actor.name,
      scopes: actor.scopes === 'all' ? [...ADMIN_SCOPES] : [...actor.scopes],
      ownConsumersOnly: actor.ownConsumersOnly,
      plans: actor.plans === null ? null : [...actor.plans],
      expiresAt: actor.expiresAt?.toISOString() ?? null,
      actsForUsers: actor.actsForUsers === true,
    };
  }

  @Post('tokens')
  @AdminOperation({ operationId: 'createAdminToken', summary: 'Create a scoped admin token (shown once)' })
  @AdminErrors({ 400: [BAD_SCOPE, PAST_EXPIRY, ...MALFORMED_BODY] })
  @ApiCreatedResponse({ type: CreatedAdminTokenResponse, description: 'The token (shown only here) and its record.' })
  async create(
    @AdminCall() call: AdminRequestContext,
    @Body() body: CreateAdminTokenDto,
  ): Promise<CreatedAdminTokenResponse> {
    const expiresAt = body.expiresAt === undefined ? undefined : dateTimeOf(body.expiresAt);
    if (expiresAt && expiresAt.getTime() <= this.clock.now())
      throw new ApiError('VALIDATION_FAILED', 'expiresAt must be in the future');
    const { token, record } = await this.tokens.create(call, { ...body, expiresAt });
    return { token, record: toAdminTokenResponse(record) };
  }

  @Get('tokens')
  @AdminOperation({ operationId: 'listAdminTokens', summary: 'List the admin tokens, never their secrets' })
  @ApiOkResponse({
    type: [AdminTokenResponse],
    description: 'Every token, revoked and expired ones included; never a secret.',
  })
  async list(@AdminCall() { actor }: AdminRequestContext): Promise<AdminTokenResponse[]> {
    return (await this.tokens.list(actor)).map(toAdminTokenResponse);
  }

  @Post('tokens/:id/revoke')
  @AdminOperation({ operationId: 'revokeAdminToken', summary: 'Revoke an admin token on every instance' })
  @HttpCode(200)
  @ApiOkResponse({ type: AdminTokenResponse, description: 'Refused by every instance within a second. Idempotent.' })
  @AdminErrors({
    400: [['VALIDATION_FAILED', 'id must be a UUID']],
    404: {
      description:
        'No such token, or (a restricted token) one it did not create: a token outside its reach does not exist for it (`NOT_FOUND`).',
      messages: [`No admin token ${EXAMPLE_KEY_ID}.`],
    },
  })
  async revoke(@AdminCall() call: AdminRequestContext, @Param() { id }: AdminTokenParams): Promise<AdminTokenResponse> {
    return toAdminTokenResponse(await this.tokens.revoke(call, id));
  }

  @Get('audit')
  @AdminOperation({ operationId: 'listAuditEntries', summary: 'Read the audit log of admin changes and refusals' })
  @AdminErrors({
    400: [
      ['VALIDATION_FAILED', 'limit must be an integer from 1 to 1000'],
      ['VALIDATION_FAILED', 'from must be an ISO 8601 date-time'],
    ],
  })
  @ApiOkResponse({
    type: AuditPageResponse,
    description: 'The audit log, oldest first (newest first with `order=desc`), paged like /consumers.',
  })
  async auditLog(
    @AdminCall() { actor }: AdminRequestContext,
    @Query() query: ListAuditQueryDto,
  ): Promise<AuditPageResponse> {
    const page = await this.audit.list({
      from: query.from === undefined ? undefined : dateTimeOf(query.from),
      to: query.to === undefined ? undefined : dateTimeOf(query.to),
      actor: query.actor,
      target: query.target,
      action: query.action,
      limit: query.limit ?? PAGE_SIZE.default,
      order: query.order,
      after: query.after,
      about: consumerFilter(actor),
    });
    return { items: page.items.map(toAuditEntryResponse), next: page.next };
  }

  @Post('audit/events')
  @AdminOperation({
    operationId: 'recordAuditEvent',
    summary:
      'Record a sign-in, a failed sign-in, a lockout, a sign-out or a linked or unlinked identity of the portal or the console',
    description:
      'What a web app reports about the people who sign in to it: the row names the person (`onBehalfOf`) and their address (`endUserAddress`); its actor is the calling token. Only root and tokens created with `actsForUsers` may call it. A flood is counted, never dropped: past 30 rows of their own per kind, token, address and minute, one aggregate row counts the rest.',
  })
  @HttpCode(204)
  @AdminErrors({
    400: [
      ['VALIDATION_FAILED', UNKNOWN_KIND_MESSAGE],
      ['VALIDATION_FAILED', 'address must be an IPv4 or IPv6 address, or an IPv6 /64 block'],
      ...MALFORMED_BODY,
    ],
  })
  @ApiNoContentResponse({ description: 'Recorded (on a row of its own, or counted on an aggregate row).' })
  async recordEvent(@AdminCall() call: AdminRequestContext, @Body() body: RecordAuditEventDto): Promise<void> {
    await this.audit.recordSignInEvent(call, {
      kind: body.kind,
      subject: body.subject ?? null,
      address: body.address ?? null,
      reason: body.reason ?? null,
    });
  }
}
