import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { AdminCall } from '../../access/admin-call.decorator';
import { AdminRequestContext } from '../../access/admin-context';
import { AdminOperation } from '../../access/admin-operation.decorator';
import {
  AdminErrors,
  AdminExample,
  EXAMPLE_CONSUMER,
  MALFORMED_BODY,
  notFound,
} from '../../admin-conventions/admin-responses';
import { ADMIN_TAG } from '../../admin-conventions/admin-tags';
import { CONSUMER_NAME_RULE } from '../../consumers/consumer-name';
import { ConsumerParams } from '../../consumers/admin/dto/consumer-params.dto';
import { UpdateCredentialDto } from '../../consumers/admin/dto/allowed-addresses.dto';
import { ALLOWED_ADDRESSES_RULE } from '../../consumers/allowed-addresses';
import { ClientBindingsService } from '../client-bindings.service';
import {
  ClientBindingParams,
  ClientBindingResponse,
  CreateClientBindingDto,
  EXAMPLE_BINDING_ID,
  EXAMPLE_CLIENT_ID,
  EXAMPLE_ISSUER,
  toClientBindingResponse,
} from './dto/client-binding.dto';

const BAD_NAME: AdminExample = ['VALIDATION_FAILED', `name must be ${CONSUMER_NAME_RULE}`];
const BAD_BINDING_ID: AdminExample = ['VALIDATION_FAILED', 'bindingId must be a UUID'];
const NO_SUCH_BINDING = `Consumer "${EXAMPLE_CONSUMER}" has no client binding ${EXAMPLE_BINDING_ID}.`;

/** A consumer's OAuth client bindings (docs/oauth.md). Thin: validation by DTO, one service call, the mapping. */
@ApiTags(ADMIN_TAG)
@ApiBearerAuth('bearer')
@Controller()
export class ClientBindingsAdminController {
  constructor(private readonly bindings: ClientBindingsService) {}

  @Get('consumers/:name/client-bindings')
  @AdminOperation({
    operationId: 'listClientBindings',
    summary: "List a consumer's OAuth client bindings",
    description: 'The clients whose access tokens authenticate as this consumer, beside its keys, oldest first.',
  })
  @ApiOkResponse({ type: [ClientBindingResponse] })
  @AdminErrors({ 400: [BAD_NAME], 404: notFound() })
  async list(
    @AdminCall() call: AdminRequestContext,
    @Param() { name }: ConsumerParams,
  ): Promise<ClientBindingResponse[]> {
    return (await this.bindings.list(call.actor, name)).map(toClientBindingResponse);
  }

  @Post('consumers/:name/client-bindings')
  @AdminOperation({
    operationId: 'createClientBinding',
    summary: "Bind an issuer's OAuth client to a consumer",
    description:
      "The client's access tokens then authenticate as the consumer on every instance, counted on the same windows, quota, credits and bans as its keys. The issuer must be configured (OAUTH_ISSUERS); a client is bound to one consumer at most.",
  })
  @ApiCreatedResponse({ type: ClientBindingResponse, description: 'The binding.' })
  @AdminErrors({
    400: [
      ['VALIDATION_FAILED', `issuer must be one of the configured issuers (OAUTH_ISSUERS): ${EXAMPLE_ISSUER}`],
      ['VALIDATION_FAILED', 'clientId must be at most 255 characters long'],
      BAD_NAME,
      ...MALFORMED_BODY,
    ],
    404: notFound(),
    409: [
      [
        'CLIENT_ALREADY_BOUND',
        `Client "${EXAMPLE_CLIENT_ID}" of ${EXAMPLE_ISSUER} is bound to a consumer already: unbind it there first.`,
      ],
    ],
  })
  async create(
    @AdminCall() call: AdminRequestContext,
    @Param() { name }: ConsumerParams,
    @Body() body: CreateClientBindingDto,
  ): Promise<ClientBindingResponse> {
    return toClientBindingResponse(await this.bindings.bind(call, name, body.issuer, body.clientId));
  }

  @Patch('consumers/:name/client-bindings/:bindingId')
  @AdminOperation({
    operationId: 'updateClientBinding',
    summary: "Restrict where a bound client's tokens may be used from",
    description:
      "`allowedAddresses`: the addresses and CIDR ranges its tokens' requests may come from, within its consumer's own (null: anywhere the consumer allows). A request from elsewhere gets 403 ADDRESS_NOT_ALLOWED, counted against its address's anonymous limit (as a bad key is), never on the consumer. Every instance applies it at once.",
  })
  @ApiOkResponse({ type: ClientBindingResponse, description: 'The binding, as changed.' })
  @AdminErrors({
    400: [['VALIDATION_FAILED', ALLOWED_ADDRESSES_RULE], BAD_BINDING_ID, BAD_NAME, ...MALFORMED_BODY],
    404: notFound(NO_SUCH_BINDING),
  })
  async update(
    @AdminCall() call: AdminRequestContext,
    @Param() { name, bindingId }: ClientBindingParams,
    @Body() body: UpdateCredentialDto,
  ): Promise<ClientBindingResponse> {
    return toClientBindingResponse(
      await this.bindings.setAllowedAddresses(call, name, bindingId, body.allowedAddresses),
    );
  }

  @Delete('consumers/:name/client-bindings/:bindingId')
  @HttpCode(200)
  @AdminOperation({
    operationId: 'deleteClientBinding',
    summary: 'Unbind an OAuth client from a consumer',
    description:
      "Its tokens are refused on every instance at once (within the key cache's TTL where the change channel is away).",
  })
  @ApiOkResponse({ type: ClientBindingResponse, description: 'The binding removed.' })
  @AdminErrors({
    400: [BAD_BINDING_ID, BAD_NAME],
    404: notFound(NO_SUCH_BINDING),
  })
  async delete(
    @AdminCall() call: AdminRequestContext,
    @Param() { name, bindingId }: ClientBindingParams,
  ): Promise<ClientBindingResponse> {
    return toClientBindingResponse(await this.bindings.unbind(call, name, bindingId));
  }
}
