import { Body, Controller, Get, NotFoundException, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import {
  AdminApiError,
  eventTypeChoices,
  holdShownOnce,
  readWebhookForm,
  redirectAfterSave,
  refusalText,
  rethrowUnlessRefusal,
  saveSession,
  secretOverlapChoices,
  setFlash,
  takeShownOnce,
  WEBHOOK_REFUSALS,
  webhookDeliveryRows,
  webhookEndpointRow,
  webhookRefusal,
} from '@app/web';
import type { AdminWebhookEndpoint, WebhookFormState } from '@app/web';
import { rotationOverlap } from '@app/contract';
import { SignedInGuard, SignedInRequest } from '../accounts/signed-in.guard';
import { Developer, developerOf, PortalApi } from '../admin-api/portal-api';
import {
  Page,
  renderView,
  WebhookConfirmView,
  WebhookDeliveriesView,
  WebhookSecretView,
  WebhooksView,
} from './webhooks.views';

/** The session's one-time secret of the webhook secret page (never the key page's). */
const SHOWN_WEBHOOK_SECRET = 'portal.webhook-secret';
const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NO_DELIVERY = 'No such delivery to this endpoint.';

/**
 * The signed-in developer's webhook endpoints (docs/webhooks.md, "In the portal and console"): list, add (the secret
 * shown once), enable/disable, rotate the secret, delete, send a test event; an endpoint's deliveries and
 * redelivery. Every admin call names the session's consumer, never one from the URL or the form: an endpoint id of
 * another account is the admin API's 404.
 */
@Controller('webhooks')
@UseGuards(SignedInGuard)
export class WebhooksController {
  constructor(private readonly api: PortalApi) {}

  @Get()
  @Page('webhooks')
  async list(@Req() request: SignedInRequest): Promise<WebhooksView> {
    return this.page(request, { typed: { url: '', description: '', eventTypes: [] }, errors: {} });
  }

  /** Post/Redirect/Get: the new endpoint's secret is held in the session for the one page the redirect leads to. */
  @Post()
  async create(@Body() body: unknown, @Req() request: SignedInRequest, @Res() response: Response): Promise<void> {
    const read = readWebhookForm(body);
    if ('refused' in read) return renderView(response, 'webhooks', await this.page(request, read.refused), 400);
    const { by, name } = this.caller(request);
    try {
      const created = await this.api.createWebhookEndpoint(by, name, read.input);
      holdShownOnce(request, SHOWN_WEBHOOK_SECRET, { secret: created.secret, details: { target: created.url } });
    } catch (error) {
      rethrowUnlessRefusal(error);
      const refused = webhookRefusal(error, {
        url: read.input.url,
        description: read.input.description ?? '',
        eventTypes: read.input.eventTypes ?? [],
      });
      return renderView(response, 'webhooks', await this.page(request, refused), error.status === 409 ? 409 : 400);
    }
    await redirectAfterSave(request, response, '/webhooks/secret');
  }

  /** The secret made by the last add or rotation, once; a reload (or any later visit) says it was shown once. */
  @Get('secret')
  @Page('webhook-secret')
  async secret(@Req() request: SignedInRequest): Promise<WebhookSecretView> {
    const shown = takeShownOnce(request, SHOWN_WEBHOOK_SECRET);
    if (shown) await saveSession(request);
    return {
      title: shown ? 'Your webhook signing secret' : 'Secret shown once',
      secret: shown?.secret,
      target: shown?.details?.target as string | undefined,
      rotated: shown?.details?.rotated === true,
      previousSignsUntil: shown?.details?.previousSignsUntil as string | undefined,
    };
  }

  @Get(':id/deliveries')
  @Page('webhook-deliveries')
  async deliveries(
    @Param('id') id: string,
    @Query('after') after: unknown,
    @Req() request: SignedInRequest,
  ): Promise<WebhookDeliveriesView> {
    const { by, name } = this.caller(request);
    const cursor = typeof after === 'string' && ID.test(after) ? after : undefined;
    const [endpoint, page] = await this.owned(() =>
      Promise.all([
        this.api.webhookEndpoint(by, name, checkedId(id)),
        this.api.webhookDeliveries(by, name, id, cursor ? { after: cursor } : {}),
      ]),
    );
    const path = endpointPath(endpoint);
    return {
      title: 'Webhook deliveries',
      endpoint: webhookEndpointRow(endpoint, path),
      deliveries: webhookDeliveryRows(page.items, (delivery) => `${path}/deliveries/${delivery}/redeliver`),
      olderHref: page.next ? `${path}/deliveries?after=${encodeURIComponent(page.next)}` : null,
    };
  }

  @Post(':id/test')
  async test(@Param('id') id: string, @Req() request: SignedInRequest, @Res() response: Response): Promise<void> {
    const { by, name } = this.caller(request);
    if (!ID.test(id)) return this.back(request, response, '/webhooks', 'error', WEBHOOK_REFUSALS.NOT_FOUND!);
    try {
      const endpoint = await this.api.webhookEndpoint(by, name, id);
      await this.api.testWebhookEndpoint(by, name, id);
      return this.back(
        request,
        response,
        `${endpointPath(endpoint)}/deliveries`,
        'success',
        `A test event (webhook.test) is on its way to ${endpoint.url}: its delivery shows below within a few seconds (reload the page).`,
      );
    } catch (error) {
      return this.refused(request, response, error);
    }
  }

  @Post(':id/enable')
  enable(@Param('id') id: string, @Req() request: SignedInRequest, @Res() response: Response): Promise<void> {
    return this.setEnabled(id, true, request, response);
  }

  @Post(':id/disable')
  disable(@Param('id') id: string, @Req() request: SignedInRequest, @Res() response: Response): Promise<void> {
    return this.setEnabled(id, false, request, response);
  }

  @Get(':id/rotate-secret')
  @Page('webhook-confirm')
  async confirmRotate(@Param('id') id: string, @Req() request: SignedInRequest): Promise<WebhookConfirmView> {
    const { by, name } = this.caller(request);
    const endpoint = await this.owned(() => this.api.webhookEndpoint(by, name, checkedId(id)));
    return {
      title: 'Rotate a webhook secret',
      heading: `Give ${endpoint.url} a new secret?`,
      text: 'The new secret is shown once, on the next page. Meanwhile every delivery is signed with both secrets, so your receiver can switch to the new one without losing a delivery. Choose None if the current secret leaked.',
      action: `${endpointPath(endpoint)}/rotate-secret`,
      button: 'Rotate secret',
      cancel: '/webhooks',
      overlaps: secretOverlapChoices(),
    };
  }

  @Post(':id/rotate-secret')
  async rotate(
    @Param('id') id: string,
    @Body() body: Record<string, unknown>,
    @Req() request: SignedInRequest,
    @Res() response: Response,
  ): Promise<void> {
    const { by, name } = this.caller(request);
    if (!ID.test(id)) return this.back(request, response, '/webhooks', 'error', WEBHOOK_REFUSALS.NOT_FOUND!);
    const overlap = rotationOverlap(body?.overlap);
    if (!overlap)
      return this.back(request, response, '/webhooks', 'error', 'Choose how long the old secret keeps signing.');
    try {
      const rotated = await this.api.rotateWebhookSecret(by, name, id, overlap.seconds);
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
      return this.refused(request, response, error);
    }
    await redirectAfterSave(request, response, '/webhooks/secret');
  }

  @Get(':id/delete')
  @Page('webhook-confirm')
  async confirmDelete(@Param('id') id: string, @Req() request: SignedInRequest): Promise<WebhookConfirmView> {
    const { by, name } = this.caller(request);
    const endpoint = await this.owned(() => this.api.webhookEndpoint(by, name, checkedId(id)));
    return {
      title: 'Delete a webhook endpoint',
      heading: `Delete the endpoint ${endpoint.url}?`,
      text: 'Nothing is sent to it from now on, and its deliveries are deleted with it. This cannot be undone.',
      action: `${endpointPath(endpoint)}/delete`,
      button: 'Delete endpoint',
      cancel: '/webhooks',
    };
  }

  @Post(':id/delete')
  async remove(@Param('id') id: string, @Req() request: SignedInRequest, @Res() response: Response): Promise<void> {
    const { by, name } = this.caller(request);
    if (!ID.test(id)) return this.back(request, response, '/webhooks', 'error', WEBHOOK_REFUSALS.NOT_FOUND!);
    try {
      const endpoint = await this.api.webhookEndpoint(by, name, id);
      await this.api.deleteWebhookEndpoint(by, name, id);
      return this.back(request, response, '/webhooks', 'success', `The endpoint ${endpoint.url} is deleted.`);
    } catch (error) {
      return this.refused(request, response, error);
    }
  }

  /**
   * The admin route names the session's consumer and this endpoint: a delivery of anyone else's (or to another
   * endpoint, or an endpoint not theirs) is its 404, said as "no such delivery" on the list.
   */
  @Post(':id/deliveries/:deliveryId/redeliver')
  async redeliver(
    @Param('id') id: string,
    @Param('deliveryId') deliveryId: string,
    @Req() request: SignedInRequest,
    @Res() response: Response,
  ): Promise<void> {
    const { by, name } = this.caller(request);
    if (!ID.test(id) || !ID.test(deliveryId)) return this.back(request, response, '/webhooks', 'error', NO_DELIVERY);
    try {
      await this.api.redeliverWebhook(by, name, id, deliveryId);
    } catch (error) {
      rethrowUnlessRefusal(error);
      if (error.code === 'NOT_FOUND') return this.back(request, response, '/webhooks', 'error', NO_DELIVERY);
      return this.refused(request, response, error);
    }
    return this.back(
      request,
      response,
      `/webhooks/${encodeURIComponent(id)}/deliveries`,
      'success',
      'Sent again: the new delivery (the same webhook-id) is at the top of the list.',
    );
  }

  private async setEnabled(id: string, enabled: boolean, request: SignedInRequest, response: Response): Promise<void> {
    const { by, name } = this.caller(request);
    if (!ID.test(id)) return this.back(request, response, '/webhooks', 'error', WEBHOOK_REFUSALS.NOT_FOUND!);
    try {
      const endpoint = await this.api.setWebhookEndpointEnabled(by, name, id, enabled);
      return this.back(
        request,
        response,
        '/webhooks',
        'success',
        enabled
          ? `The endpoint ${endpoint.url} is enabled: later events are delivered to it.`
          : `The endpoint ${endpoint.url} is disabled: nothing is delivered to it until you enable it.`,
      );
    } catch (error) {
      return this.refused(request, response, error);
    }
  }

  private async page(request: SignedInRequest, form: WebhookFormState): Promise<WebhooksView> {
    const { by, name } = this.caller(request);
    const endpoints = await this.api.webhookEndpoints(by, name);
    return {
      title: 'Webhooks',
      consumerName: name,
      endpoints: endpoints.map((e) => webhookEndpointRow(e, endpointPath(e))),
      form,
      choices: eventTypeChoices(form.typed.eventTypes),
    };
  }

  private caller(request: SignedInRequest): { by: Developer; name: string } {
    return { by: developerOf(request.account, request), name: request.account.consumerName };
  }

  /** A page of one endpoint: the admin API's 404 (another account's id, or none) as this page's own 404. */
  private async owned<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (error instanceof AdminApiError && error.code === 'NOT_FOUND')
        throw new NotFoundException(WEBHOOK_REFUSALS.NOT_FOUND);
      throw error;
    }
  }

  /** A change the admin API refused: back to the list with the sentence chosen by its code. */
  private async refused(request: SignedInRequest, response: Response, error: unknown): Promise<void> {
    rethrowUnlessRefusal(error);
    return this.back(request, response, '/webhooks', 'error', refusalText(error, WEBHOOK_REFUSALS));
  }

  private async back(
    request: SignedInRequest,
    response: Response,
    to: string,
    kind: 'success' | 'error',
    text: string,
  ): Promise<void> {
    setFlash(request, kind, text);
    await redirectAfterSave(request, response, to);
  }
}

function endpointPath(endpoint: AdminWebhookEndpoint): string {
  return `/webhooks/${encodeURIComponent(endpoint.id)}`;
}

/** A path id that is not a UUID names no endpoint: 404 before anything is asked. */
function checkedId(id: string): string {
  if (!ID.test(id)) throw new NotFoundException(WEBHOOK_REFUSALS.NOT_FOUND);
  return id;
}
