import {
  AdminApi,
  holdShownOnce,
  redirectAfterSave,
  refusalText,
  rethrowUnlessRefusal,
  saveSession,
  takeShownOnce,
} from '@app/web';
import { Body, Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { act, field, segment } from '../actions';
import { endUserOf, tokenOf } from '../auth/operator';
import { ConfirmView, NewTokenView, Page, renderView, TokensView } from '../console.views';
import type { AdminScope, RefusalSentences } from '@app/web';

/** The session's one-time secret of the new-token page. */
const SHOWN_TOKEN = 'console.token';

/** What the token form says when refused (chosen by code; the rest: libs/web's REFUSALS). */
const TOKEN_REFUSALS: RefusalSentences = {
  VALIDATION_FAILED:
    'Not accepted: a name of letters, digits, dots, dashes and underscores, at least one scope, and an expiry date (YYYY-MM-DD) in the future.',
  FORBIDDEN: 'Your token can grant only the scopes and restrictions it holds itself.',
};

function scopesOf(body: unknown): string[] {
  const value = (body as Record<string, unknown> | undefined)?.scopes;
  if (Array.isArray(value)) return value.filter((s): s is string => typeof s === 'string');
  return typeof value === 'string' ? [value] : [];
}

/** Scoped admin tokens (tokens:admin): create (shown once), list, revoke. A token grants only scopes it holds. */
@Controller('tokens')
export class TokensController {
  constructor(private readonly admin: AdminApi) {}

  @Get()
  @Page('tokens')
  async list(@Req() request: Request): Promise<TokensView> {
    const tokens = await this.admin.as(tokenOf(request)).GET('/tokens');
    const now = Date.now();
    return {
      title: 'Admin tokens',
      // The scopes a new token may get: those of the signed-in operator (the admin API refuses any other).
      grantable: request.session.operator?.scopes ?? [],
      tokens: tokens.map((t) => {
        const state = t.revokedAt ? 'revoked' : t.expiresAt && Date.parse(t.expiresAt) <= now ? 'expired' : 'active';
        return { ...t, state, active: state === 'active', path: `/tokens/${segment(t.id)}` };
      }),
    };
  }

  /** Post/Redirect/Get: the new token is held in the session for the one page the redirect leads to. */
  @Post()
  async create(@Req() request: Request, @Res() response: Response, @Body() body: unknown): Promise<void> {
    const expires = field(body, 'expiresAt');
    const input = {
      name: field(body, 'name'),
      scopes: scopesOf(body),
      ...(expires ? { expiresAt: /^\d{4}-\d{2}-\d{2}$/.test(expires) ? `${expires}T00:00:00Z` : expires } : {}),
    };
    try {
      const created = await this.admin.as(tokenOf(request), endUserOf(request)).POST('/tokens', {
        body: {
          ...input,
          // As typed: the admin API refuses a scope it does not know, and the page says so.
          scopes: input.scopes as AdminScope[],
        },
      });
      holdShownOnce(request, SHOWN_TOKEN, {
        secret: created.token,
        details: { record: { name: created.record.name, scopes: created.record.scopes } },
      });
    } catch (error) {
      rethrowUnlessRefusal(error);
      const page = await this.list(request);
      return renderView(
        response,
        'tokens',
        { ...page, error: refusalText(error, TOKEN_REFUSALS), typed: { ...input, expiresAt: expires } },
        error.status,
      );
    }
    await redirectAfterSave(request, response, '/tokens/new');
  }

  /** The token made by the last POST, once; a reload says it was shown once. */
  @Get('new')
  @Page('new-token')
  async newToken(@Req() request: Request): Promise<NewTokenView> {
    const shown = takeShownOnce(request, SHOWN_TOKEN);
    if (shown) await saveSession(request);
    return {
      title: shown ? 'New admin token' : 'Token shown once',
      token: shown?.secret,
      record: shown?.details?.record as NewTokenView['record'],
    };
  }

  @Get(':id/revoke')
  @Page('confirm')
  confirmRevoke(@Param('id') id: string): ConfirmView {
    return {
      title: 'Revoke token',
      heading: 'Revoke this admin token?',
      text: 'Every instance refuses it within a second; a console session signed in with it ends on its next request. This cannot be undone.',
      action: `/tokens/${segment(id)}/revoke`,
      button: 'Revoke token',
      cancel: '/tokens',
    };
  }

  @Post(':id/revoke')
  revoke(@Req() request: Request, @Res() response: Response, @Param('id') id: string): Promise<void> {
    return act(
      request,
      response,
      '/tokens',
      async () => {
        const token = await this.admin
          .as(tokenOf(request), endUserOf(request))
          .POST('/tokens/{id}/revoke', { params: { path: { id } } });
        return `Token "${token.name}" is revoked.`;
      },
      TOKEN_REFUSALS,
    );
  }
}
