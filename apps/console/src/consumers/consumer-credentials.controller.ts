import { AdminApi } from '@app/web';
import { Body, Controller, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { act, field, segment } from '../actions';
import { endUserOf, tokenOf } from '../auth/operator';
import { ADDRESS_REFUSALS, addressListFrom, BINDING_REFUSALS } from './credential-forms';

/** "anywhere", or the ranges as the admin API stored them. */
const whereText = (ranges: readonly string[] | null): string =>
  ranges ? `only from ${ranges.join(', ')}` : 'anywhere';

/**
 * Where a consumer's credentials may be used from, and its OAuth clients (issue #50, docs/oauth.md): the consumer's
 * allowed addresses (consumers:write), a key's (keys:write), binding and unbinding a client (keys:write). Each form
 * goes back to the consumer page with what the admin API answered, or its refusal in the console's words.
 */
@Controller('consumers')
export class ConsumerCredentialsController {
  constructor(private readonly admin: AdminApi) {}

  @Post(':name/allowed-addresses')
  saveConsumerAddresses(
    @Req() request: Request,
    @Res() response: Response,
    @Param('name') name: string,
    @Body() body: unknown,
  ): Promise<void> {
    return act(
      request,
      response,
      `/consumers/${segment(name)}`,
      async () => {
        const updated = await this.admin.as(tokenOf(request), endUserOf(request)).PATCH('/consumers/{name}', {
          params: { path: { name } },
          body: { allowedAddresses: addressListFrom(field(body, 'allowedAddresses')) },
        });
        return `Saved: ${name}'s keys and tokens may be used ${whereText(updated.allowedAddresses)}.`;
      },
      ADDRESS_REFUSALS,
    );
  }

  @Post(':name/keys/:keyId/allowed-addresses')
  saveKeyAddresses(
    @Req() request: Request,
    @Res() response: Response,
    @Param('name') name: string,
    @Param('keyId') keyId: string,
    @Body() body: unknown,
  ): Promise<void> {
    return act(
      request,
      response,
      `/consumers/${segment(name)}`,
      async () => {
        const key = await this.admin.as(tokenOf(request), endUserOf(request)).PATCH('/consumers/{name}/keys/{keyId}', {
          params: { path: { name, keyId } },
          body: { allowedAddresses: addressListFrom(field(body, 'allowedAddresses')) },
        });
        return `Saved: key ${key.hint} may be used ${whereText(key.allowedAddresses)}${key.allowedAddresses ? '' : ` ${name} allows`}.`;
      },
      ADDRESS_REFUSALS,
    );
  }

  @Post(':name/client-bindings')
  bind(
    @Req() request: Request,
    @Res() response: Response,
    @Param('name') name: string,
    @Body() body: unknown,
  ): Promise<void> {
    return act(
      request,
      response,
      `/consumers/${segment(name)}`,
      async () => {
        const bound = await this.admin
          .as(tokenOf(request), endUserOf(request))
          .POST('/consumers/{name}/client-bindings', {
            params: { path: { name } },
            body: { issuer: field(body, 'issuer'), clientId: field(body, 'clientId') },
          });
        return `Bound: client ${bound.clientId} of ${bound.issuer} now calls the API as ${name}, on its limits.`;
      },
      BINDING_REFUSALS,
    );
  }

  @Post(':name/client-bindings/:bindingId/unbind')
  unbind(
    @Req() request: Request,
    @Res() response: Response,
    @Param('name') name: string,
    @Param('bindingId') bindingId: string,
  ): Promise<void> {
    return act(
      request,
      response,
      `/consumers/${segment(name)}`,
      async () => {
        const removed = await this.admin
          .as(tokenOf(request), endUserOf(request))
          .DELETE('/consumers/{name}/client-bindings/{bindingId}', { params: { path: { name, bindingId } } });
        return `Unbound: client ${removed.clientId} of ${removed.issuer}; its tokens are refused from now on.`;
      },
      BINDING_REFUSALS,
    );
  }
}
