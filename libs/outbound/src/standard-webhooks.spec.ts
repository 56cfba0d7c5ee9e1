import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { generateWebhookSecret, newWebhookMessageId, signWebhook } from './standard-webhooks';

describe('Standard Webhooks signing', () => {
  const payload = JSON.stringify({ type: 'usage.threshold', data: { consumer: 'acme', percent: 80 } });

  it('generates whsec_ secrets of 32 random bytes by default, 24 at least', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(Buffer.from(generateWebhookSecret(24).slice(6), 'base64')).toHaveLength(24);
    expect(generateWebhookSecret()).not.toBe(secret);
    expect(() => generateWebhookSecret(16)).toThrow(RangeError);
  });

  it("signs so that the package's own Webhook.verify accepts the message", () => {
    const secret = generateWebhookSecret();
    const id = newWebhookMessageId();
    const headers = signWebhook(secret, { id, timestamp: new Date(), payload });
    expect(id).toMatch(/^msg_[0-9a-f-]{36}$/);
    expect(headers['webhook-id']).toBe(id);
    expect(headers['webhook-timestamp']).toMatch(/^\d{10}$/);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(secret).verify(payload, { ...headers })).toEqual(JSON.parse(payload));
  });

  it('is refused by Webhook.verify for a changed body, another secret or another id', () => {
    const secret = generateWebhookSecret();
    const headers = signWebhook(secret, { id: 'msg_1', timestamp: new Date(), payload });
    const receiver = new Webhook(secret);
    expect(() => receiver.verify(payload.replace('80', '90'), { ...headers })).toThrow(WebhookVerificationError);
    expect(() => new Webhook(generateWebhookSecret()).verify(payload, { ...headers })).toThrow(
      WebhookVerificationError,
    );
    expect(() => receiver.verify(payload, { ...headers, 'webhook-id': 'msg_2' })).toThrow(WebhookVerificationError);
  });

  it('writes the timestamp in whole seconds, the one the signature covers', () => {
    const secret = generateWebhookSecret();
    const timestamp = new Date(Date.now() - 1_500);
    const headers = signWebhook(secret, { id: 'msg_1', timestamp, payload });
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(timestamp.getTime() / 1000)));
    expect(() => new Webhook(secret).verify(payload, { ...headers })).not.toThrow();
    // Signed 10 minutes ago: the receiver's tolerance (5 minutes) refuses it, as the spec wants for replays.
    const old = signWebhook(secret, { id: 'msg_1', timestamp: new Date(Date.now() - 600_000), payload });
    expect(() => new Webhook(secret).verify(payload, { ...old })).toThrow('Message timestamp too old');
  });

  it('signs with every secret of a rotation: a receiver that knows either accepts', () => {
    const [previous, next] = [generateWebhookSecret(), generateWebhookSecret()];
    const headers = signWebhook([previous, next], { id: 'msg_1', timestamp: new Date(), payload });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Webhook(previous).verify(payload, { ...headers })).not.toThrow();
    expect(() => new Webhook(next).verify(payload, { ...headers })).not.toThrow();
  });

  it('refuses a secret that is not whsec_ and the base64 of 24+ bytes', () => {
    const message = { id: 'msg_1', timestamp: new Date(), payload };
    expect(() => signWebhook('not-a-secret', message)).toThrow('whsec_');
    expect(() => signWebhook(`whsec_${Buffer.alloc(16, 1).toString('base64')}`, message)).toThrow('24+');
    expect(() => signWebhook([], message)).toThrow('at least one secret');
  });
});
