import { AfterAnswer } from '../../../apps/portal/src/accounts/after-answer';
import { targetRefusalText, WEBHOOK_FORM_ERRORS } from '@app/web';
import { adminCall } from '../../support/gateway';
import { PortalStack, startPortalStack } from '../../support/portal';
import { linkIn, PortalVisitor } from '../../support/portal-visitor';
import { WebhookReceiver } from '../../support/webhook-receiver';

const PASSWORD = 'a long enough passphrase';

interface Endpoint {
  id: string;
  url: string;
  enabled: boolean;
  description: string;
  eventTypes: string[] | null;
}
interface Delivery {
  id: string;
  state: string;
  eventType: string;
}

/** The text of an element by its data-testid (the first), its tags removed and spaces collapsed. */
const unescape = (text: string) =>
  text
    .replace(/&#x3D;/g, '=')
    .replace(/&#x2F;/g, '/')
    .replace(/&amp;/g, '&');
const byTestId = (html: string, id: string) =>
  unescape(new RegExp(`data-testid="${id}"[^>]*>([\\s\\S]*?)</`).exec(html)?.[1] ?? '')
    .replace(/\s+/g, ' ')
    .trim();

/**
 * The portal's webhook pages over HTTP (docs/portal.md, "Webhooks"): the add form's checks next to each field with
 * what was typed kept, a refused target said as such, the secret once, CSRF on every form, and a developer who
 * cannot reach another account's endpoint or delivery by its id in the URL, whatever the action.
 */
describe('the portal’s webhook pages', () => {
  let stack: PortalStack;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    await receiver.start();
    // The gateway may send to this machine's loopback (the receiver) only: the operator's allow-list.
    stack = await startPortalStack({ gatewayEnv: { OUTBOUND_ALLOW_LIST: '127.0.0.1/32', WEBHOOK_POLL_MS: '50' } });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await receiver.close();
  });

  async function developer(label: string) {
    const email = `${label}-${Date.now()}@example.com`;
    const visitor = new PortalVisitor(stack.portal.url);
    expect((await visitor.submit('/signup', { email, password: PASSWORD })).status).toBe(200);
    await stack.portal.app.get(AfterAnswer).drain();
    const token = linkIn((await stack.smtp.next(email, /Verify/)).text, '/verify');
    expect((await visitor.submit(`/verify?token=${token}`, { token, password: PASSWORD }, '/verify')).status).toBe(303);
    const found = await adminCall(stack.gateway, 'GET', `/consumers?email=${encodeURIComponent(email)}`);
    const consumer = (found.body as { items: Array<{ name: string }> }).items[0].name;
    return { visitor, consumer };
  }

  const endpointsOf = async (consumer: string) =>
    (
      (await adminCall(stack.gateway, 'GET', `/consumers/${consumer}/webhook-endpoints`)).body as {
        items: Endpoint[];
      }
    ).items;

  it('checks each field next to it, keeps what was typed, and says a refused target is one', async () => {
    const { visitor, consumer } = await developer('fields');
    const bad = await visitor.submit('/webhooks', {
      url: 'hooks.example.com/no-scheme',
      description: 'x'.repeat(201),
      eventTypes: 'quota.threshold_crossed',
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain(`id="field-url-error">${WEBHOOK_FORM_ERRORS.url}`);
    expect(bad.text).toContain(`id="field-description-error">${WEBHOOK_FORM_ERRORS.description}`);
    expect(bad.text).toMatch(/id="field-url"[^>]*value="hooks.example.com\/no-scheme"/);
    expect(bad.text).toMatch(/value="quota.threshold_crossed" checked/);
    expect(bad.text).toMatch(/id="field-url"[\s\S]*?aria-invalid="true"/);

    const unknownType = await visitor.submit('/webhooks', { url: receiver.url('/x'), eventTypes: 'user.deleted' });
    expect(unknownType.status).toBe(400);
    expect(unknownType.text).toContain(`id="field-eventTypes-error">${WEBHOOK_FORM_ERRORS.eventTypes}`);

    // A private address (outside the allow-list) and the cloud metadata address (never allowed): the gateway's
    // outbound policy refuses them (WEBHOOK_TARGET_REFUSED), and the page says so next to the address, naming the
    // reason the admin API's details give, what was typed kept.
    for (const [url, reason] of [
      ['http://10.0.0.5/hooks', 'private'],
      ['http://169.254.169.254/latest/meta-data', 'metadata'],
    ]) {
      const refused = await visitor.submit('/webhooks', { url, description: 'mine' });
      expect(refused.status).toBe(400);
      expect(unescape(refused.text)).toContain(`id="field-url-error">${targetRefusalText(reason)}`);
      expect(targetRefusalText(reason)).not.toBe(WEBHOOK_FORM_ERRORS.target);
      expect(unescape(refused.text)).toMatch(new RegExp(`id="field-url"[^>]*value="${url}"`));
    }
    expect(await endpointsOf(consumer)).toEqual([]);
  });

  it('adds an endpoint, shows its secret once, and refuses a form without its CSRF token', async () => {
    const { visitor, consumer } = await developer('once');
    const url = receiver.url('/once');
    const added = await visitor.submitAndFollow('/webhooks', {
      url,
      description: 'Billing alerts',
      eventTypes: 'credits.low_balance',
    });
    expect(added.posted.status).toBe(303);
    expect(added.posted.location).toMatch(/\/webhooks\/secret$/);
    const secret = byTestId(added.text, 'webhook-secret');
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    expect(added.text).toContain('Copy the secret now: it is shown only this once.');
    // Never again: a reload says it was shown once, the list shows the masked form only.
    const again = await visitor.get('/webhooks/secret');
    expect(again.text).toContain('data-testid="webhook-secret-gone"');
    expect(unescape(again.text)).not.toContain(secret);
    const list = await visitor.get('/webhooks');
    expect(list.text).toContain(url);
    expect(unescape(list.text)).not.toContain(secret);
    expect(unescape(list.text)).toContain(`whsec_…${secret.slice(-4)}`);
    const [endpoint] = await endpointsOf(consumer);
    expect(endpoint).toMatchObject({ url, description: 'Billing alerts', eventTypes: ['credits.low_balance'] });

    // Without the form's token: 403 "Form expired", and nothing changes.
    for (const path of ['/webhooks', `/webhooks/${endpoint.id}/disable`, `/webhooks/${endpoint.id}/delete`]) {
      const forged = await fetch(`${stack.portal.url}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ url: receiver.url('/forged') }).toString(),
      });
      expect(forged.status).toBe(403);
    }
    expect(await endpointsOf(consumer)).toEqual([expect.objectContaining({ id: endpoint.id, enabled: true })]);

    // Disable and enable, a rotation (the new secret once), the delete after its confirmation.
    expect((await visitor.submit('/webhooks', {}, `/webhooks/${endpoint.id}/disable`)).status).toBe(303);
    expect((await endpointsOf(consumer))[0].enabled).toBe(false);
    expect((await visitor.submit('/webhooks', {}, `/webhooks/${endpoint.id}/enable`)).status).toBe(303);
    expect((await endpointsOf(consumer))[0].enabled).toBe(true);
    // A rotation asks how long the old secret keeps signing: an overlap the form does not offer changes nothing.
    const unoffered = await visitor.submitAndFollow(`/webhooks/${endpoint.id}/rotate-secret`, { overlap: 'forever' });
    expect(unoffered.text).toContain('Choose how long the old secret keeps signing.');
    const rotated = await visitor.submitAndFollow(`/webhooks/${endpoint.id}/rotate-secret`, { overlap: '24h' });
    const second = byTestId(rotated.text, 'webhook-secret');
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(secret);
    expect(rotated.text).toContain('the old one also signs every delivery until');
    const now = await visitor.submitAndFollow(`/webhooks/${endpoint.id}/rotate-secret`, { overlap: 'none' });
    expect(now.text).toContain('the old one no longer signs');
    const confirm = await visitor.get(`/webhooks/${endpoint.id}/delete`);
    expect(confirm.text).toContain(`Delete the endpoint ${url}?`);
    expect((await visitor.submit(`/webhooks/${endpoint.id}/delete`, {})).status).toBe(303);
    expect(await endpointsOf(consumer)).toEqual([]);
  });

  it('keeps a developer to their own endpoints and deliveries, whatever id the URL names', async () => {
    const owner = await developer('owner');
    const other = await developer('other');
    const ownersUrl = receiver.url('/owner');
    expect((await owner.visitor.submit('/webhooks', { url: ownersUrl })).status).toBe(303);
    const [endpoint] = await endpointsOf(owner.consumer);
    const sent = await adminCall(
      stack.gateway,
      'POST',
      `/consumers/${owner.consumer}/webhook-endpoints/${endpoint.id}/test`,
    );
    const delivery = sent.body as Delivery;
    // The other developer's own endpoint, to name in the redeliver path beside the owner's delivery.
    expect((await other.visitor.submit('/webhooks', { url: receiver.url('/other') })).status).toBe(303);
    const [othersEndpoint] = await endpointsOf(other.consumer);

    for (const path of [
      `/webhooks/${endpoint.id}/deliveries`,
      `/webhooks/${endpoint.id}/delete`,
      `/webhooks/${endpoint.id}/rotate-secret`,
    ]) {
      const page = await other.visitor.get(path);
      expect(page.status).toBe(404);
      expect(page.text).not.toContain(ownersUrl);
    }
    for (const action of ['disable', 'delete', 'rotate-secret', 'test']) {
      // With a valid overlap, so that the rotation reaches the admin API (which finds no such endpoint).
      const form: Record<string, string> = action === 'rotate-secret' ? { overlap: '24h' } : {};
      const posted = await other.visitor.submitAndFollow('/webhooks', form, `/webhooks/${endpoint.id}/${action}`);
      expect(posted.posted.status).toBe(303);
      expect(posted.text).toContain('No such webhook endpoint.');
      expect(posted.text).not.toContain('data-testid="webhook-secret"');
    }
    // The portal no longer looks for the delivery itself: the admin API's route names the session's consumer and
    // the endpoint, and answers 404 for the owner's delivery under the owner's endpoint id...
    const underOwners = await other.visitor.submitAndFollow(
      '/webhooks',
      {},
      `/webhooks/${endpoint.id}/deliveries/${delivery.id}/redeliver`,
    );
    expect(underOwners.posted.status).toBe(303);
    expect(underOwners.text).toContain('No such delivery to this endpoint.');
    // ...and under the other's own endpoint: not one of its deliveries, not sent again.
    const crossed = await other.visitor.submitAndFollow(
      '/webhooks',
      {},
      `/webhooks/${othersEndpoint.id}/deliveries/${delivery.id}/redeliver`,
    );
    expect(crossed.text).toContain('No such delivery to this endpoint.');
    const deliveries = await adminCall(
      stack.gateway,
      'GET',
      `/consumers/${owner.consumer}/webhook-endpoints/${endpoint.id}/deliveries`,
    );
    expect((deliveries.body as { items: Delivery[] }).items.map((d) => d.id)).toEqual([delivery.id]);
    expect(await endpointsOf(owner.consumer)).toEqual([
      expect.objectContaining({ id: endpoint.id, enabled: true, url: ownersUrl }),
    ]);

    // The owner redelivers their own: a second delivery of the same message.
    const redelivered = await owner.visitor.submitAndFollow(
      `/webhooks/${endpoint.id}/deliveries`,
      {},
      `/webhooks/${endpoint.id}/deliveries/${delivery.id}/redeliver`,
    );
    expect(redelivered.posted.status).toBe(303);
    expect(redelivered.text).toContain('Sent again');
    const after = await adminCall(
      stack.gateway,
      'GET',
      `/consumers/${owner.consumer}/webhook-endpoints/${endpoint.id}/deliveries`,
    );
    expect((after.body as { items: Delivery[] }).items).toHaveLength(2);
  });
});
