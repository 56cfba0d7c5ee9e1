import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { AdminCall } from '../../access/admin-call.decorator';
import { AdminRequestContext } from '../../access/admin-context';
import { AdminOperation } from '../../access/admin-operation.decorator';
import { ADMIN_TAG } from '../../admin-conventions/admin-tags';
import {
  AdminErrors,
  AdminExample,
  EXAMPLE_CONSUMER,
  MALFORMED_BODY,
  notFound,
} from '../../admin-conventions/admin-responses';
import { PAGE_SIZE } from '../../admin-conventions/page-size';
import { ConsumerParams } from '../../consumers/admin/dto/consumer-params.dto';
import { DEFAULT_OVERLAP_SECONDS, MAX_OVERLAP_SECONDS } from '../../consumers/admin/dto/issue-key.dto';
import { CONSUMER_NAME_RULE } from '../../consumers/consumer-name';
import { FAILING_MAX, WebhookEndpointsService } from '../webhook-endpoints.service';
import { TARGET_REFUSED_PREFIX } from '../webhook-target';
import {
  CreatedWebhookEndpointResponse,
  CreateWebhookEndpointDto,
  DESCRIPTION_MAX,
  EVENT_TYPES_RULE,
  EXAMPLE_DELIVERY_ID,
  EXAMPLE_ENDPOINT_ID,
  FailingWebhookEndpointListResponse,
  FleetWebhookDeliveryParams,
  ListWebhookDeliveriesQueryDto,
  RotateWebhookSecretDto,
  toDeliveryResponse,
  toEndpointResponse,
  toFailingEndpointResponse,
  UpdateWebhookEndpointDto,
  URL_RULE,
  WebhookDeliveryPageResponse,
  WebhookDeliveryParams,
  WebhookDeliveryResponse,
  WebhookEndpointListResponse,
  WebhookEndpointParams,
  WebhookEndpointResponse,
  WebhookIdParams,
} from './dto/webhook-endpoint.dto';
import {
  ListThresholdEventsQueryDto,
  POLICY_RULE,
  ThresholdEventPageResponse,
  TYPE_RULE,
} from './dto/threshold-event.dto';

const BAD_NAME: AdminExample = ['VALIDATION_FAILED', `name must be ${CONSUMER_NAME_RULE}`];
const BAD_ID: AdminExample = ['VALIDATION_FAILED', 'id must be a UUID'];
const BAD_PAGE: AdminExample[] = [
  ['VALIDATION_FAILED', `limit must be an integer from ${PAGE_SIZE.min} to ${PAGE_SIZE.max}`],
  ['VALIDATION_FAILED', 'after must be the next of a previous page'],
];
const BODY_RULES: AdminExample[] = [
  ['VALIDATION_FAILED', URL_RULE],
  [
    'WEBHOOK_TARGET_REFUSED',
    `${TARGET_REFUSED_PREFIX} (metadata): 169.254.169.254: metadata address, refused`,
    { reason: 'metadata' },
  ],
  [
    'WEBHOOK_TARGET_REFUSED',
    `${TARGET_REFUSED_PREFIX} (private): 10.1.2.3: private address, refused`,
    { reason: 'private' },
  ],
  ['VALIDATION_FAILED', EVENT_TYPES_RULE],
  ['VALIDATION_FAILED', `description must be at most ${DESCRIPTION_MAX} characters`],
  ...MALFORMED_BODY,
];
const ROTATION_OVERLAP = `The old secret keeps signing beside the new one for \`overlapSeconds\` (default ${DEFAULT_OVERLAP_SECONDS}, at most ${MAX_OVERLAP_SECONDS}; 0: it stops now): each delivery then carries both signatures, so the receiver switches without losing one. A rotation during an overlap ends it. The body is optional.`;
const BAD_OVERLAP: AdminExample = ['VALIDATION_FAILED', `overlapSeconds must be at most ${MAX_OVERLAP_SECONDS}`];
const NO_ENDPOINT = `Consumer "${EXAMPLE_CONSUMER}" has no webhook endpoint ${EXAMPLE_ENDPOINT_ID}.`;
const NO_FLEET_ENDPOINT = `No fleet-wide webhook endpoint ${EXAMPLE_ENDPOINT_ID}.`;
const LIMIT_REACHED = (who: string): AdminExample => [
  'WEBHOOK_ENDPOINT_LIMIT',
  `${who} has 10 webhook endpoints, the most allowed (WEBHOOK_MAX_ENDPOINTS 10): remove one first.`,
];
const BAD_DELIVERY_ID: AdminExample = ['VALIDATION_FAILED', 'deliveryId must be a UUID'];
const NO_DELIVERY = `Webhook endpoint ${EXAMPLE_ENDPOINT_ID} of consumer "${EXAMPLE_CONSUMER}" has no delivery ${EXAMPLE_DELIVERY_ID}.`;
const NO_FLEET_DELIVERY = `Fleet-wide webhook endpoint ${EXAMPLE_ENDPOINT_ID} has no delivery ${EXAMPLE_DELIVERY_ID}.`;
const REDELIVER_TEXT =
  'A new pending delivery of the same message (the same `webhook-id`) to the same endpoint; a disabled endpoint stays disabled (enable it first). The path names the endpoint: a delivery to any other endpoint is 404.';
const SECRET_ONCE = 'The secret is in full in this answer only: every other answer masks it.';

/**
 * Webhook endpoints and deliveries (issue #49, docs/webhooks.md): a consumer's own endpoints (the portal's, for
 * its developer), an operator's fleet-wide ones (every consumer's events), the deliveries with their attempts,
 * redelivery, and the endpoints failing across the fleet (the console's).
 */
@ApiTags(ADMIN_TAG)
@ApiBearerAuth('bearer')
@Controller()
export class WebhooksAdminController {
  constructor(private readonly endpoints: WebhookEndpointsService) {}

  @Get('consumers/:name/webhook-endpoints')
  @AdminOperation({ operationId: 'listWebhookEndpoints', summary: "List a consumer's webhook endpoints" })
  @ApiOkResponse({ type: WebhookEndpointListResponse, description: 'Oldest first; secrets masked.' })
  @AdminErrors({ 400: [BAD_NAME], 404: notFound() })
  async list(
    @AdminCall() call: AdminRequestContext,
    @Param() { name }: ConsumerParams,
  ): Promise<WebhookEndpointListResponse> {
    return { items: (await this.endpoints.list(call.actor, name)).map((e) => toEndpointResponse(e)) };
  }

  @Post('consumers/:name/webhook-endpoints')
  @AdminOperation({
    operationId: 'createWebhookEndpoint',
    summary: 'Add a webhook endpoint to a consumer',
    description: `Its URL is checked with the outbound policy now, and again at every attempt. ${SECRET_ONCE}`,
  })
  @ApiCreatedResponse({ type: CreatedWebhookEndpointResponse, description: 'The endpoint, with its secret in full.' })
  @AdminErrors({
    400: [BAD_NAME, ...BODY_RULES],
    404: notFound(),
    409: [LIMIT_REACHED(`Consumer "${EXAMPLE_CONSUMER}"`)],
  })
  async create(
    @AdminCall() call: AdminRequestContext,
    @Param() { name }: ConsumerParams,
    @Body() body: CreateWebhookEndpointDto,
  ): Promise<CreatedWebhookEndpointResponse> {
    return toEndpointResponse(await this.endpoints.create(call, name, body), true);
  }

  @Get('consumers/:name/webhook-endpoints/:id')
  @AdminOperation({ operationId: 'getWebhookEndpoint', summary: "Read one of a consumer's webhook endpoints" })
  @ApiOkResponse({ type: WebhookEndpointResponse })
  @AdminErrors({ 400: [BAD_NAME, BAD_ID], 404: notFound(NO_ENDPOINT) })
  async get(
    @AdminCall() call: AdminRequestContext,
    @Param() { name, id }: WebhookEndpointParams,
  ): Promise<WebhookEndpointResponse> {
    return toEndpointResponse(await this.endpoints.get(call.actor, name, id));
  }

  @Patch('consumers/:name/webhook-endpoints/:id')
  @AdminOperation({
    operationId: 'updateWebhookEndpoint',
    summary: "Change a consumer's webhook endpoint, or disable or enable it",
    description:
      'Only the fields given change. `enabled: true` enables a disabled endpoint again (its failure span starts over).',
  })
  @ApiOkResponse({ type: WebhookEndpointResponse })
  @AdminErrors({ 400: [BAD_NAME, BAD_ID, ...BODY_RULES], 404: notFound(NO_ENDPOINT) })
  async update(
    @AdminCall() call: AdminRequestContext,
    @Param() { name, id }: WebhookEndpointParams,
    @Body() body: UpdateWebhookEndpointDto,
  ): Promise<WebhookEndpointResponse> {
    return toEndpointResponse(await this.endpoints.update(call, name, id, body));
  }

  @Delete('consumers/:name/webhook-endpoints/:id')
  @HttpCode(204)
  @AdminOperation({
    operationId: 'deleteWebhookEndpoint',
    summary: "Remove a consumer's webhook endpoint and its deliveries",
  })
  @ApiNoContentResponse({ description: 'Removed.' })
  @AdminErrors({ 400: [BAD_NAME, BAD_ID], 404: notFound(NO_ENDPOINT) })
  async remove(@AdminCall() call: AdminRequestContext, @Param() { name, id }: WebhookEndpointParams): Promise<void> {
    await this.endpoints.remove(call, name, id);
  }

  @Post('consumers/:name/webhook-endpoints/:id/rotate-secret')
  @HttpCode(200)
  @AdminOperation({
    operationId: 'rotateWebhookEndpointSecret',
    summary: "Give a consumer's webhook endpoint a new signing secret",
    description: `${ROTATION_OVERLAP} ${SECRET_ONCE}`,
  })
  @ApiBody({ type: RotateWebhookSecretDto, required: false })
  @ApiOkResponse({ type: CreatedWebhookEndpointResponse, description: 'The endpoint, with its new secret in full.' })
  @AdminErrors({ 400: [BAD_NAME, BAD_ID, BAD_OVERLAP, ...MALFORMED_BODY], 404: notFound(NO_ENDPOINT) })
  async rotateSecret(
    @AdminCall() call: AdminRequestContext,
    @Param() { name, id }: WebhookEndpointParams,
    @Body() body: RotateWebhookSecretDto,
  ): Promise<CreatedWebhookEndpointResponse> {
    const overlap = body?.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS;
    return toEndpointResponse(await this.endpoints.rotateSecret(call, name, id, overlap), true);
  }

  @Post('consumers/:name/webhook-endpoints/:id/test')
  @HttpCode(202)
  @AdminOperation({
    operationId: 'testWebhookEndpoint',
    summary: 'Send a test event to one of a consumer’s webhook endpoints',
    description:
      'A `webhook.test` event for this endpoint only, whatever its filter: the answer is its delivery, pending; the worker sends it within a poll (`WEBHOOK_POLL_MS`).',
  })
  @ApiAcceptedResponse({ type: WebhookDeliveryResponse, description: 'The delivery, pending.' })
  @AdminErrors({ 400: [BAD_NAME, BAD_ID], 404: notFound(NO_ENDPOINT) })
  async test(
    @AdminCall() call: AdminRequestContext,
    @Param() { name, id }: WebhookEndpointParams,
  ): Promise<WebhookDeliveryResponse> {
    return toDeliveryResponse(await this.endpoints.sendTest(call, name, id));
  }

  @Get('consumers/:name/webhook-endpoints/:id/deliveries')
  @AdminOperation({
    operationId: 'listWebhookDeliveries',
    summary: "List the deliveries to a consumer's webhook endpoint, each with its attempts",
    description: 'Newest first. Pass `next` as `after` for the next page.',
  })
  @ApiOkResponse({ type: WebhookDeliveryPageResponse })
  @AdminErrors({ 400: [BAD_NAME, BAD_ID, ...BAD_PAGE], 404: notFound(NO_ENDPOINT) })
  async deliveries(
    @AdminCall() call: AdminRequestContext,
    @Param() { name, id }: WebhookEndpointParams,
    @Query() query: ListWebhookDeliveriesQueryDto,
  ): Promise<WebhookDeliveryPageResponse> {
    const page = await this.endpoints.deliveries(call.actor, name, id, {
      limit: query.limit ?? PAGE_SIZE.default,
      after: query.after,
    });
    return { items: page.items.map(toDeliveryResponse), next: page.next };
  }

  @Get('consumers/:name/threshold-events')
  @AdminOperation({
    operationId: 'listThresholdEvents',
    summary: "List a consumer's threshold events (what its webhooks were sent)",
    description:
      'Newest first (the order they were written in). Each item is the body its webhooks were sent (`ThresholdEventPayload`, docs/alerts.md). Pass `next` as `after`, with the same filters, for the next page. Events are kept `ALERT_EVENT_RETENTION_DAYS` after their period ended (docs/alerts.md, "Retention").',
  })
  @ApiOkResponse({ type: ThresholdEventPageResponse })
  @AdminErrors({
    400: [BAD_NAME, ...BAD_PAGE, ['VALIDATION_FAILED', POLICY_RULE], ['VALIDATION_FAILED', TYPE_RULE]],
    404: notFound(),
  })
  async thresholdEvents(
    @AdminCall() call: AdminRequestContext,
    @Param() { name }: ConsumerParams,
    @Query() query: ListThresholdEventsQueryDto,
  ): Promise<ThresholdEventPageResponse> {
    return this.endpoints.thresholdEvents(call.actor, name, {
      limit: query.limit ?? PAGE_SIZE.default,
      after: query.after,
      policy: query.policy,
      type: query.type,
    });
  }

  @Post('consumers/:name/webhook-endpoints/:id/deliveries/:deliveryId/redeliver')
  @HttpCode(202)
  @AdminOperation({
    operationId: 'redeliverWebhookDelivery',
    summary: "Deliver a message again to the same consumer's webhook endpoint",
    description: REDELIVER_TEXT,
  })
  @ApiAcceptedResponse({ type: WebhookDeliveryResponse, description: 'The new delivery, pending.' })
  @AdminErrors({
    400: [BAD_NAME, BAD_ID, BAD_DELIVERY_ID],
    404: {
      description: 'No such consumer, no such endpoint of it, or no such delivery to that endpoint (`NOT_FOUND`).',
      messages: [...notFound(NO_ENDPOINT), NO_DELIVERY],
    },
  })
  async redeliver(
    @AdminCall() call: AdminRequestContext,
    @Param() { name, id, deliveryId }: WebhookDeliveryParams,
  ): Promise<WebhookDeliveryResponse> {
    return toDeliveryResponse(await this.endpoints.redeliver(call, name, id, deliveryId));
  }

  @Get('webhook-endpoints')
  @AdminOperation({
    operationId: 'listFleetWebhookEndpoints',
    summary: "List the fleet-wide webhook endpoints (every consumer's events)",
  })
  @ApiOkResponse({ type: WebhookEndpointListResponse, description: 'Oldest first; secrets masked.' })
  @AdminErrors({ 400: [] })
  async listFleet(@AdminCall() call: AdminRequestContext): Promise<WebhookEndpointListResponse> {
    return { items: (await this.endpoints.list(call.actor, null)).map((e) => toEndpointResponse(e)) };
  }

  @Post('webhook-endpoints')
  @AdminOperation({
    operationId: 'createFleetWebhookEndpoint',
    summary: "Add a fleet-wide webhook endpoint: it gets every consumer's events",
    description: SECRET_ONCE,
  })
  @ApiCreatedResponse({ type: CreatedWebhookEndpointResponse, description: 'The endpoint, with its secret in full.' })
  @AdminErrors({ 400: BODY_RULES, 409: [LIMIT_REACHED('The fleet')] })
  async createFleet(
    @AdminCall() call: AdminRequestContext,
    @Body() body: CreateWebhookEndpointDto,
  ): Promise<CreatedWebhookEndpointResponse> {
    return toEndpointResponse(await this.endpoints.create(call, null, body), true);
  }

  @Get('webhook-endpoints/failing')
  @AdminOperation({
    operationId: 'listFailingWebhookEndpoints',
    summary: 'List the webhook endpoints failing or disabled, across consumers',
    description: `Longest failing first, then the disabled ones; at most ${FAILING_MAX}. Each with its newest attempt's error, status and time.`,
  })
  @ApiOkResponse({ type: FailingWebhookEndpointListResponse })
  @AdminErrors({ 400: [] })
  async failing(): Promise<FailingWebhookEndpointListResponse> {
    return { items: (await this.endpoints.failing()).map(toFailingEndpointResponse) };
  }

  @Get('webhook-endpoints/:id')
  @AdminOperation({ operationId: 'getFleetWebhookEndpoint', summary: 'Read one fleet-wide webhook endpoint' })
  @ApiOkResponse({ type: WebhookEndpointResponse })
  @AdminErrors({
    400: [BAD_ID],
    404: { description: 'No such fleet-wide endpoint (`NOT_FOUND`).', messages: [NO_FLEET_ENDPOINT] },
  })
  async getFleet(
    @AdminCall() call: AdminRequestContext,
    @Param() { id }: WebhookIdParams,
  ): Promise<WebhookEndpointResponse> {
    return toEndpointResponse(await this.endpoints.get(call.actor, null, id));
  }

  @Patch('webhook-endpoints/:id')
  @AdminOperation({
    operationId: 'updateFleetWebhookEndpoint',
    summary: 'Change a fleet-wide webhook endpoint, or disable or enable it',
  })
  @ApiOkResponse({ type: WebhookEndpointResponse })
  @AdminErrors({
    400: [BAD_ID, ...BODY_RULES],
    404: { description: 'No such fleet-wide endpoint (`NOT_FOUND`).', messages: [NO_FLEET_ENDPOINT] },
  })
  async updateFleet(
    @AdminCall() call: AdminRequestContext,
    @Param() { id }: WebhookIdParams,
    @Body() body: UpdateWebhookEndpointDto,
  ): Promise<WebhookEndpointResponse> {
    return toEndpointResponse(await this.endpoints.update(call, null, id, body));
  }

  @Delete('webhook-endpoints/:id')
  @HttpCode(204)
  @AdminOperation({
    operationId: 'deleteFleetWebhookEndpoint',
    summary: 'Remove a fleet-wide webhook endpoint and its deliveries',
  })
  @ApiNoContentResponse({ description: 'Removed.' })
  @AdminErrors({
    400: [BAD_ID],
    404: { description: 'No such fleet-wide endpoint (`NOT_FOUND`).', messages: [NO_FLEET_ENDPOINT] },
  })
  async removeFleet(@AdminCall() call: AdminRequestContext, @Param() { id }: WebhookIdParams): Promise<void> {
    await this.endpoints.remove(call, null, id);
  }

  @Post('webhook-endpoints/:id/rotate-secret')
  @HttpCode(200)
  @AdminOperation({
    operationId: 'rotateFleetWebhookEndpointSecret',
    summary: 'Give a fleet-wide webhook endpoint a new signing secret',
    description: `${ROTATION_OVERLAP} ${SECRET_ONCE}`,
  })
  @ApiBody({ type: RotateWebhookSecretDto, required: false })
  @ApiOkResponse({ type: CreatedWebhookEndpointResponse, description: 'The endpoint, with its new secret in full.' })
  @AdminErrors({
    400: [BAD_ID, BAD_OVERLAP, ...MALFORMED_BODY],
    404: { description: 'No such fleet-wide endpoint (`NOT_FOUND`).', messages: [NO_FLEET_ENDPOINT] },
  })
  async rotateFleetSecret(
    @AdminCall() call: AdminRequestContext,
    @Param() { id }: WebhookIdParams,
    @Body() body: RotateWebhookSecretDto,
  ): Promise<CreatedWebhookEndpointResponse> {
    const overlap = body?.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS;
    return toEndpointResponse(await this.endpoints.rotateSecret(call, null, id, overlap), true);
  }

  @Post('webhook-endpoints/:id/test')
  @HttpCode(202)
  @AdminOperation({
    operationId: 'testFleetWebhookEndpoint',
    summary: 'Send a test event to a fleet-wide webhook endpoint',
    description:
      'A `webhook.test` event for this endpoint only, whatever its filter, naming the consumer `*` (the fleet): the answer is its delivery, pending; the worker sends it within a poll (`WEBHOOK_POLL_MS`).',
  })
  @ApiAcceptedResponse({ type: WebhookDeliveryResponse, description: 'The delivery, pending.' })
  @AdminErrors({
    400: [BAD_ID],
    404: { description: 'No such fleet-wide endpoint (`NOT_FOUND`).', messages: [NO_FLEET_ENDPOINT] },
  })
  async testFleet(
    @AdminCall() call: AdminRequestContext,
    @Param() { id }: WebhookIdParams,
  ): Promise<WebhookDeliveryResponse> {
    return toDeliveryResponse(await this.endpoints.sendTest(call, null, id));
  }

  @Get('webhook-endpoints/:id/deliveries')
  @AdminOperation({
    operationId: 'listFleetWebhookDeliveries',
    summary: 'List the deliveries to a fleet-wide webhook endpoint, each with its attempts',
    description: 'Newest first. Pass `next` as `after` for the next page.',
  })
  @ApiOkResponse({ type: WebhookDeliveryPageResponse })
  @AdminErrors({
    400: [BAD_ID, ...BAD_PAGE],
    404: { description: 'No such fleet-wide endpoint (`NOT_FOUND`).', messages: [NO_FLEET_ENDPOINT] },
  })
  async fleetDeliveries(
    @AdminCall() call: AdminRequestContext,
    @Param() { id }: WebhookIdParams,
    @Query() query: ListWebhookDeliveriesQueryDto,
  ): Promise<WebhookDeliveryPageResponse> {
    const page = await this.endpoints.deliveries(call.actor, null, id, {
      limit: query.limit ?? PAGE_SIZE.default,
      after: query.after,
    });
    return { items: page.items.map(toDeliveryResponse), next: page.next };
  }

  @Post('webhook-endpoints/:id/deliveries/:deliveryId/redeliver')
  @HttpCode(202)
  @AdminOperation({
    operationId: 'redeliverFleetWebhookDelivery',
    summary: 'Deliver a message again to the same fleet-wide webhook endpoint',
    description: REDELIVER_TEXT,
  })
  @ApiAcceptedResponse({ type: WebhookDeliveryResponse, description: 'The new delivery, pending.' })
  @AdminErrors({
    400: [BAD_ID, BAD_DELIVERY_ID],
    404: {
      description: 'No such fleet-wide endpoint, or no such delivery to it (`NOT_FOUND`).',
      messages: [NO_FLEET_ENDPOINT, NO_FLEET_DELIVERY],
    },
  })
  async redeliverFleet(
    @AdminCall() call: AdminRequestContext,
    @Param() { id, deliveryId }: FleetWebhookDeliveryParams,
  ): Promise<WebhookDeliveryResponse> {
    return toDeliveryResponse(await this.endpoints.redeliver(call, null, id, deliveryId));
  }
}
