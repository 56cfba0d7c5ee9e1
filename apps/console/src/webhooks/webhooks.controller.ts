import {
  AdminApi,
  AdminApiError,
  eventTypeChoices,
  holdShownOnce,
  lastAttemptError,
  readWebhookForm,
  redirectAfterSave,
  refusalText,
  rethrowUnlessRefusal,
  saveSession,
  secretOverlapChoices,
  setFlash,
  takeShownOnce,
  webhookDeliveryRows,
  webhookEndpointRow,
  webhookRefusal,
} from '@app/web';
import type { AdminWebhookEndpoint, RefusalSentences, WebhookFormState } from '@app/web';
import {
  Body,
  Controller,
  ForbiddenException,
  Get,
  NotFoundException,
  Param,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { rotationOverlap } from '@app/contract';
import { act, segment } from '../actions';
import { abilitiesOfRequest, endUserOf, tokenOf } from '../auth/operator';
import {
  ConfirmView,
  FailingEndpointRow,
  Page,
  renderView,
  WebhookDeliveriesView,
  WebhooksView,
  WebhookSecretView,
} from '../console.views';
import { section } from '../sections';

/** The session's one-time secret of the fleet-wide endpoint's page. */
const SHOWN_WEBHOOK_SECRET = 'console.webhook-secret';
/** The failing endpoints shown, longest failing first (the admin API answers up to 1,000, each with its last error). */
const FAILING_SHOWN = 100;
const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const FLEET_REFUSALS: RefusalSentences = {
  NOT_FOUND: 'No such fleet-wide webhook endpoint.',
  WEBHOOK_ENDPOINT_LIMIT: 'The fleet has the most webhook endpoints allowed: delete one before adding another.',
  FORBIDDEN: 'Fleet-wide webhook endpoints take a token for every consumer with webhooks:write.',
};

/** Where a row's deliveries page is: a consumer's endpoint, or a fleet-wide one. */
function endpointPath(endpoint: AdminWebhookEndpoint): string {
  return endpoint.consumer === null
    ? `/webhooks/fleet/${segment(endpoint.id)}`
    : `/webhooks/consumers/${segment(endpoint.consumer)}/${segment(endpoint.id)}`;
}

function checkedId(id: string): string {
  if (!ID.test(id)) throw new NotFoundException('No such webhook endpoint.');
  return id;
}

/**
 * Webhooks across the fleet (docs/console.md, "Webhooks"): the endpoints failing or disabled, every consumer's,
 * with the last error and a link to their deliveries (`webhooks:read` on a fleet-wide token), and the operators'
 * fleet-wide endpoints (listed with read; added, the secret shown once, and deleted with `webhooks:write`).
 */
@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly admin: AdminApi) {}

  @Get()
  @Page('webhooks')
  list(@Req() request: Request): Promise<WebhooksView> {
    return this.page(request, { typed: { url: '', description: '', eventTypes: [] }, errors: {} });
  }

  @Post('fleet')
  async create(@Req() request: Request, @Res() response: Response, @Body() body: unknown): Promise<void> {
    if (!abilitiesOfRequest(request).webhooksWrite) throw new ForbiddenException(FLEET_REFUSALS.FORBIDDEN);
    const read = readWebhookForm(body);
    if ('refused' in read) return renderView(response, 'webhooks', await this.page(request, read.refused), 400);
    try {
      const created = await this.admin
        .as(tokenOf(request), endUserOf(request))
        .POST('/webhook-endpoints', { body: read.input });
      holdShownOnce(request, SHOWN_WEBHOOK_SECRET, { secret: created.secret, details: { target: created.url } });
    } catch (error) {
      rethrowUnlessRefusal(error);
      const typed = {
        url: read.input.url,
        description: read.input.description ?? '',
        eventTypes: read.input.eventTypes ?? [],
      };
      const refused = webhookRefusal(error, typed, FLEET_REFUSALS);
      return renderView(response, 'webhooks', await this.page(request, refused), error.status === 409 ? 409 : 400);
    }
    await redirectAfterSave(request, response, '/webhooks/secret');
  }

  @Get('secret')
  @Page('webhook-secret')
  async secret(@Req() request: Request): Promise<WebhookSecretView> {
    const shown = takeShownOnce(request, SHOWN_WEBHOOK_SECRET);
    if (shown) await saveSession(request);
    return {
      title: shown ? 'New webhook signing secret' : 'Secret shown once',
      secret: shown?.secret,
      target: shown?.details?.target as string | undefined,
      rotated: shown?.details?.rotated === true,
      previousSignsUntil: shown?.details?.previousSignsUntil as string | undefined,
    };
  }

  @Get('fleet/:id/rotate-secret')
  @Page('confirm')
  async confirmRotate(@Req() request: Request, @Param('id') id: string): Promise<ConfirmView> {
    const endpoint = await this.found(() =>
      this.admin.as(tokenOf(request)).GET('/webhook-endpoints/{id}', { params: { path: { id: checkedId(id) } } }),
    );
    return {
      title: 'Rotate a webhook secret',
      heading: `Give the fleet-wide endpoint ${endpoint.url} a new secret?`,
      text: 'The new secret is shown once, on the next page. Meanwhile every delivery is signed with both secrets, so the receiver can switch to the new one without losing a delivery. Choose None if the current secret leaked.',
      action: `${endpointPath(endpoint)}/rotate-secret`,
      button: 'Rotate secret',
      cancel: '/webhooks',
      overlaps: secretOverlapChoices(),
    };
  }

  @Post('fleet/:id/rotate-secret')
  async rotate(
    @Req() request: Request,
    @Res() response: Response,
    @Param('id') id: string,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    const overlap = rotationOverlap(body?.overlap);
    if (!overlap) {
      setFlash(request, 'error', 'Choose how long the old secret keeps signing.');
      return redirectAfterSave(request, response, '/webhooks');
    }
    try {
      const rotated = await this.admin
        .as(tokenOf(request), endUserOf(request))
        .POST('/webhook-endpoints/{id}/rotate-secret', {
          params: { path: { id: checkedId(id) } },
          body: { overlapSeconds: overlap.seconds },
        });
      holdShownOnce(request, SHOWN_WEBHOOK_SECRET, {
        secret: rotated.secret,
        details: {
          target: rotated.url,
          rotated: true,
          // null after a rotation with no overlap: the old secret no longer signs.
          ...(rotated.previousSecretSignsUntil ? { previousSignsUntil: rotated.previousSecretSignsUntil } : {}),
        },
      });
    } catch (error) {
      rethrowUnlessRefusal(error);
      setFlash(request, 'error', refusalText(error, FLEET_REFUSALS));
      return redirectAfterSave(request, response, '/webhooks');
    }
    await redirectAfterSave(request, response, '/webhooks/secret');
  }

  @Get('fleet/:id/delete')
  @Page('confirm')
  async confirmDelete(@Req() request: Request, @Param('id') id: string): Promise<ConfirmView> {
    const endpoint = await this.found(() =>
      this.admin.as(tokenOf(request)).GET('/webhook-endpoints/{id}', { params: { path: { id: checkedId(id) } } }),
    );
    return {
      title: 'Delete a webhook endpoint',
      heading: `Delete the fleet-wide endpoint ${endpoint.url}?`,
      text: 'Nothing is sent to it from now on, and its deliveries are deleted with it. This cannot be undone.',
      action: `${endpointPath(endpoint)}/delete`,
      button: 'Delete endpoint',
      cancel: '/webhooks',
    };
  }

  @Post('fleet/:id/delete')
  remove(@Req() request: Request, @Res() response: Response, @Param('id') id: string): Promise<void> {
    return act(
      request,
      response,
      '/webhooks',
      async () => {
        const admin = this.admin.as(tokenOf(request), endUserOf(request));
        const endpoint = await admin.GET('/webhook-endpoints/{id}', { params: { path: { id } } });
        await admin.DELETE('/webhook-endpoints/{id}', { params: { path: { id } } });
        return `The fleet-wide endpoint ${endpoint.url} is deleted.`;
      },
      FLEET_REFUSALS,
    );
  }

  @Get('fleet/:id/deliveries')
  @Page('webhook-deliveries')
  async fleetDeliveries(
    @Req() request: Request,
    @Param('id') id: string,
    @Query('after') after: unknown,
  ): Promise<WebhookDeliveriesView> {
    const admin = this.admin.as(tokenOf(request));
    const cursor = typeof after === 'string' && ID.test(after) ? { after } : {};
    const [endpoint, page] = await this.found(() =>
      Promise.all([
        admin.GET('/webhook-endpoints/{id}', { params: { path: { id: checkedId(id) } } }),
        admin.GET('/webhook-endpoints/{id}/deliveries', { params: { path: { id }, query: cursor } }),
      ]),
    );
    return this.deliveriesView(endpoint, page.items, page.next);
  }

  @Get('consumers/:name/:id/deliveries')
  @Page('webhook-deliveries')
  async consumerDeliveries(
    @Req() request: Request,
    @Param('name') name: string,
    @Param('id') id: string,
    @Query('after') after: unknown,
  ): Promise<WebhookDeliveriesView> {
    const admin = this.admin.as(tokenOf(request));
    const cursor = typeof after === 'string' && ID.test(after) ? { after } : {};
    const [endpoint, page] = await this.found(() =>
      Promise.all([
        admin.GET('/consumers/{name}/webhook-endpoints/{id}', { params: { path: { name, id: checkedId(id) } } }),
        admin.GET('/consumers/{name}/webhook-endpoints/{id}/deliveries', {
          params: { path: { name, id }, query: cursor },
        }),
      ]),
    );
    return this.deliveriesView(endpoint, page.items, page.next);
  }

  private deliveriesView(
    endpoint: AdminWebhookEndpoint,
    deliveries: Parameters<typeof webhookDeliveryRows>[0],
    next: string | null,
  ): WebhookDeliveriesView {
    const path = endpointPath(endpoint);
    return {
      title: 'Webhook deliveries',
      endpoint: webhookEndpointRow(endpoint, path),
      deliveries: webhookDeliveryRows(deliveries, null),
      olderHref: next ? `${path}/deliveries?after=${encodeURIComponent(next)}` : null,
    };
  }

  private async page(request: Request, form: WebhookFormState): Promise<WebhooksView> {
    const can = abilitiesOfRequest(request);
    const admin = this.admin.as(tokenOf(request));
    const [failing, fleet] = await Promise.all([
      section(async () => {
        const { items } = await admin.GET('/webhook-endpoints/failing');
        const shown = items.slice(0, FAILING_SHOWN).map((e): FailingEndpointRow => ({
          ...webhookEndpointRow(e, endpointPath(e)),
          lastError: lastAttemptError(e),
        }));
        return { items: shown, total: items.length, shown: shown.length };
      }, can.webhooksRead),
      section(async () => {
        const { items } = await admin.GET('/webhook-endpoints');
        return { items: items.map((e) => webhookEndpointRow(e, endpointPath(e))) };
      }, can.webhooksRead),
    ]);
    return { title: 'Webhooks', failing, fleet, form, choices: eventTypeChoices(form.typed.eventTypes) };
  }

  private async found<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (error instanceof AdminApiError && error.code === 'NOT_FOUND')
        throw new NotFoundException('No such webhook endpoint.');
      throw error;
    }
  }
}
