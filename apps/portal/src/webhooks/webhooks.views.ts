import type { EventTypeChoice, PageModel, WebhookDeliveryRow, WebhookEndpointRow, WebhookFormState } from '@app/web';
import { typedRender, typedRenderer } from '@app/web';

export interface WebhooksView extends PageModel {
  consumerName: string;
  endpoints: WebhookEndpointRow[];
  /** The add form: what was typed and the sentence next to each refused field. */
  form: WebhookFormState;
  choices: EventTypeChoice[];
}

export interface WebhookSecretView extends PageModel {
  /** Absent on a reload: the page says the secret was shown once. */
  secret?: string;
  /** The endpoint the secret signs for. */
  target?: string;
  rotated?: boolean;
  /** After a rotation with an overlap: until when the old secret signs beside the new one. */
  previousSignsUntil?: string;
}

export interface WebhookDeliveriesView extends PageModel {
  endpoint: WebhookEndpointRow;
  deliveries: WebhookDeliveryRow[];
  /** The next (older) page's link, when there is one. */
  olderHref: string | null;
}

export interface WebhookConfirmView extends PageModel {
  heading: string;
  text: string;
  action: string;
  button: string;
  cancel: string;
  /** A rotation's choice: how long the old secret keeps signing. */
  overlaps?: Array<{ value: string; label: string; selected: boolean }>;
}

/** The portal's webhook pages and their models: `@Page('webhooks')` checks a handler's answer. */
export interface PortalWebhookViews {
  webhooks: WebhooksView;
  'webhook-secret': WebhookSecretView;
  'webhook-deliveries': WebhookDeliveriesView;
  'webhook-confirm': WebhookConfirmView;
}

export const Page = typedRender<PortalWebhookViews>();
export const renderView = typedRenderer<PortalWebhookViews>();
