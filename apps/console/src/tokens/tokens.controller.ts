import { AdminApiError, AdminClient } from '@app/web';
import { Body, Controller, Get, HttpCode, Param, Post, Render, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { act, field, segment } from '../actions';
import { tokenOf } from '../auth/operator';
import type { AdminCreatedToken, AdminToken } from '@app/web';

function scopesOf(body: unknown): string[] {
  const value = (body as Record<string, unknown> | undefined)?.scopes;
  if (Array.isArray(value)) return value.filter((s): s is string => typeof s === 'string');
  return typeof value === 'string' ? [value] : [];
}

/** Scoped admin tokens (tokens:admin): create (shown once), list, revoke. A token grants only scopes it holds. */
@Controller('tokens')
export class TokensController {
  constructor(private readonly admin: AdminClient) {}

  @Get()
  @Render('tokens')
  async list(@Req() request: Request) {
    const tokens = await this.admin.get<AdminToken[]>(tokenOf(request), '/tokens');
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

  /** The new token is rendered in this answer only. */
  @Post()
  @HttpCode(201)
  async create(@Req() request: Request, @Res() response: Response, @Body() body: unknown): Promise<void> {
    const expires = field(body, 'expiresAt');
    const input = {
      name: field(body, 'name'),
      scopes: scopesOf(body),
      ...(expires ? { expiresAt: expires.length === 10 ? `${expires}T00:00:00Z` : expires } : {}),
    };
    try {
      const created = await this.admin.post<AdminCreatedToken>(tokenOf(request), '/tokens', input);
      response.status(201).render('new-token', { title: 'New admin token', created });
    } catch (error) {
      if (!(error instanceof AdminApiError) || error.status === 401 || error.status >= 500) throw error;
      const tokens = await this.list(request);
      response
        .status(error.status)
        .render('tokens', { ...tokens, error: error.message, typed: { ...input, expiresAt: expires } });
    }
  }

  @Get(':id/revoke')
  @Render('confirm')
  confirmRevoke(@Param('id') id: string) {
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
    return act(request, response, '/tokens', async () => {
      const token = await this.admin.post<AdminToken>(tokenOf(request), `/tokens/${segment(id)}/revoke`);
      return `Token "${token.name}" is revoked.`;
    });
  }
}
