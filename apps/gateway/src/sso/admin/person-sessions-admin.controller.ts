import { Body, Controller, Delete, HttpCode, Post } from '@nestjs/common';
import { ErrorDto } from '@app/contract';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { AdminCall } from '../../access/admin-call.decorator';
import { AdminRequestContext } from '../../access/admin-context';
import { AdminOperation } from '../../access/admin-operation.decorator';
import { AdminTokensService } from '../../access/admin-tokens.service';
import { TOKENS_TAG } from '../../admin-conventions/admin-tags';
import { AdminErrors, MALFORMED_BODY } from '../../admin-conventions/admin-responses';
import { PersonSignIn } from '../person-sign-in';
import { CreatePersonSessionDto, PersonSessionResponse } from './dto/person-session.dto';

/** People signed in with the operators' identity provider (issue #51, docs/sso.md). */
@ApiTags(TOKENS_TAG)
@Controller('sessions')
export class PersonSessionsAdminController {
  constructor(
    private readonly signIn: PersonSignIn,
    private readonly tokens: AdminTokensService,
  ) {}

  @Post('oidc')
  @AdminOperation({
    operationId: 'createPersonSession',
    summary: "Exchange a person's ID token for their short-lived admin token (sign-in)",
    description:
      "What the console calls after its authorization code exchange: the ID token is verified against ADMIN_OIDC_ISSUER (signature, `iss`, `aud` = ADMIN_OIDC_AUDIENCE, `exp`, issued at most 5 minutes ago) and taken once; the person's roles (ADMIN_OIDC_ROLES_CLAIM) map to admin scopes (ADMIN_OIDC_ROLES). The answer is an admin token named for the person that expires after ADMIN_OIDC_SESSION_MINUTES; its `user.sign-in` row, and every row its calls write, name the person. Refusals are `user.sign-in-failed` rows. At most 60 a minute per source address.",
  })
  @AdminErrors({
    400: [['VALIDATION_FAILED', 'idToken must be a JWT (three base64url segments)'], ...MALFORMED_BODY],
    404: {
      description: 'No identity provider is configured for operators (`NOT_FOUND`).',
      messages: ['No identity provider is configured for operators (ADMIN_OIDC_ISSUER).'],
    },
  })
  @ApiUnauthorizedResponse({
    type: ErrorDto,
    description:
      'The ID token is not valid here (issuer, audience, signature, at most 5 minutes old), or was already exchanged (`UNAUTHORIZED`).',
  })
  @ApiForbiddenResponse({
    type: ErrorDto,
    description: 'The person holds no role the gateway maps to admin scopes (`FORBIDDEN`).',
  })
  @ApiCreatedResponse({ type: PersonSessionResponse, description: "The person's admin token (shown only here)." })
  async create(
    @AdminCall() call: AdminRequestContext,
    @Body() body: CreatePersonSessionDto,
  ): Promise<PersonSessionResponse> {
    const session = await this.signIn.exchange(
      { requestId: call.requestId, source: call.source },
      body.idToken,
      body.address ?? null,
    );
    return { ...session, expiresAt: session.expiresAt.toISOString() };
  }

  @Delete('current')
  @ApiBearerAuth('bearer')
  @AdminOperation({
    operationId: 'endPersonSession',
    summary: "End the calling person's session (sign-out)",
    description:
      "Revokes the calling token, a person's session credential, on every instance within a second, and writes a `user.sign-out` row naming them. Any other token: 403.",
  })
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Ended: the token is refused from now on.' })
  async end(@AdminCall() call: AdminRequestContext): Promise<void> {
    await this.tokens.endPersonSession(call, null);
  }
}
