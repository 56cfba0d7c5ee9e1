import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { OutboundClient, generateWebhookSecret, newWebhookMessageId, signWebhook } from '@app/outbound';
import { HttpReceiver, type ReceiverHandler } from '../../support/http-receiver';

/** A receiver as the spec describes one: the package's own Webhook.verify over the raw body, 204 or 400. */
function verifyingReceiver(secret: string): ReceiverHandler {
  const webhook = new Webhook(secret);
  return (request, response) => {
    try {
      webhook.verify(request.body, request.headers as Record<string, string>);
      response.writeHead(204).end();
    } catch (error) {
      response.writeHead(400, { 'content-type': 'text/plain' }).end((error as Error).message);
    }
  };
}

describe('outbound requests: signed webhooks', () => {
  let receiver: HttpReceiver;
  const outbound = new OutboundClient({ requireHttps: true, allowList: ['127.0.0.1/32'] });

  beforeEach(async () => {
    receiver = await HttpReceiver.start();
  });
  afterEach(() => receiver.close());

  it("is accepted by a receiver that verifies it with standardwebhooks' Webhook.verify", async () => {
    const secret = generateWebhookSecret();
    receiver.answer(verifyingReceiver(secret));
    const payload = JSON.stringify({ type: 'usage.threshold', data: { consumer: 'acme', percent: 80 } });
    const headers = signWebhook(secret, { id: newWebhookMessageId(), timestamp: new Date(), payload });
    const result = await outbound.send(`http://127.0.0.1:${receiver.port}/webhooks`, {
      headers: { 'content-type': 'application/json', ...headers },
      body: payload,
    });
    expect(result).toMatchObject({ kind: 'response', status: 204 });
    expect(receiver.requests[0].headers['webhook-id']).toBe(headers['webhook-id']);
    expect(receiver.requests[0].headers['webhook-signature']).toBe(headers['webhook-signature']);
  });

  it('is refused by that receiver when the body was changed after signing', async () => {
    const secret = generateWebhookSecret();
    receiver.answer(verifyingReceiver(secret));
    const payload = JSON.stringify({ type: 'usage.threshold', data: { consumer: 'acme', percent: 80 } });
    const headers = signWebhook(secret, { id: newWebhookMessageId(), timestamp: new Date(), payload });
    const result = await outbound.send(`http://127.0.0.1:${receiver.port}/webhooks`, {
      headers: { 'content-type': 'application/json', ...headers },
      body: payload.replace('80', '100'),
    });
    expect(result).toMatchObject({ kind: 'response', status: 400 });
    expect(result.kind === 'response' && result.body.toString()).toBe('No matching signature found');
  });
});

describe('outbound requests over HTTPS to a pinned address', () => {
  const HOST = 'receiver.test';
  let dir: string;
  let cert: string;
  let receiver: HttpReceiver;

  beforeAll(async () => {
    // A certificate for receiver.test only (not for 127.0.0.1), made by openssl for this run.
    dir = mkdtempSync(join(tmpdir(), 'outbound-tls-'));
    execFileSync(
      'openssl',
      [
        ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'],
        ...['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
        ...['-subj', `/CN=${HOST}`, '-addext', `subjectAltName=DNS:${HOST}`],
      ],
      { stdio: 'ignore' },
    );
    cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    receiver = await HttpReceiver.start({ tls: { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert } });
  });
  afterAll(async () => {
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const pinned = (options: { ca?: string } = {}) =>
    new OutboundClient({
      requireHttps: true,
      allowList: ['127.0.0.1/32'],
      resolver: async () => ['127.0.0.1'],
      ...options,
    });

  it("connects to the checked address and keeps the URL's name for SNI, the certificate check and Host", async () => {
    const result = await pinned({ ca: cert }).send(`https://${HOST}:${receiver.port}/webhooks`, { body: '{}' });
    expect(result).toMatchObject({ kind: 'response', status: 204 });
    const [request] = receiver.requests.slice(-1);
    expect(request).toMatchObject({ localAddress: '127.0.0.1', servername: HOST });
    expect(request.headers.host).toBe(`${HOST}:${receiver.port}`);
  });

  it('checks the certificate against the URL host: the same server by its address is refused', async () => {
    const before = receiver.requests.length;
    const result = await pinned({ ca: cert }).send(`https://127.0.0.1:${receiver.port}/webhooks`, { body: '{}' });
    expect(result).toMatchObject({
      kind: 'connect_error',
      message: expect.stringContaining('ERR_TLS_CERT_ALTNAME_INVALID'),
    });
    expect(receiver.requests).toHaveLength(before);
  });

  it('trusts only the configured authorities: a self-signed certificate is refused without them', async () => {
    const before = receiver.requests.length;
    const result = await pinned().send(`https://${HOST}:${receiver.port}/webhooks`, { body: '{}' });
    expect(result).toMatchObject({ kind: 'connect_error', message: expect.stringMatching(/self[- ]signed/i) });
    expect(receiver.requests).toHaveLength(before);
  });
});
