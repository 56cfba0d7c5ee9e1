import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EMAIL_ADDRESS_RULE } from '@app/contract';
import { generateApiKey, hashApiKey } from '../../../apps/gateway/src/consumers/api-key';
import {
  INVALID_TOKEN_MESSAGE,
  MISSING_TOKEN_MESSAGE,
} from '../../../apps/gateway/src/admin-conventions/admin-responses';
import {
  EXAMPLE_CLIENT_ID,
  EXAMPLE_ISSUER,
} from '../../../apps/gateway/src/client-bindings/admin/dto/client-binding.dto';
import { ALLOWED_ADDRESSES_RULE } from '../../../apps/gateway/src/consumers/allowed-addresses';
import { adminCall } from '../../support/gateway';
import { call, expectErrorBody, Reply } from '../../support/http';
import { withStack } from '../../support/with-stack';

type Example = { code: string; message: string; status: number };
type Media = { schema?: { $ref?: string }; example?: Example; examples?: Record<string, { value: Example }> };
type Response = {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, Media>;
  $ref?: string;
};
interface Operation {
  operationId: string;
  summary?: string;
  tags: string[];
  security: Array<Record<string, string[]>>;
  requestBody?: { required?: boolean };
  responses: Record<string, Response>;
}
interface Document {
  openapi: string;
  info: { version: string; license?: unknown };
  servers?: Array<{ url: string }>;
  tags?: Array<{ name: string; description?: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, { required?: string[]; properties?: Record<string, unknown> }>;
    responses: Record<string, Response>;
    securitySchemes: Record<string, Record<string, unknown>>;
  };
}

const OPERATIONS = [
  ['get', '/consumers', 'listConsumers'],
  ['post', '/consumers', 'createConsumer'],
  ['get', '/consumers/{name}', 'getConsumer'],
  ['patch', '/consumers/{name}', 'updateConsumer'],
  ['post', '/consumers/{name}/disable', 'disableConsumer'],
  ['post', '/consumers/{name}/enable', 'enableConsumer'],
  ['post', '/consumers/{name}/keys', 'issueKey'],
  ['post', '/consumers/{name}/revoke', 'revokeConsumerKeys'],
  ['post', '/consumers/{name}/keys/{keyId}/revoke', 'revokeKey'],
  ['post', '/consumers/{name}/keys/{keyId}/rotate', 'rotateKey'],
  ['patch', '/consumers/{name}/keys/{keyId}', 'updateKey'],
  ['get', '/consumers/{name}/client-bindings', 'listClientBindings'],
  ['post', '/consumers/{name}/client-bindings', 'createClientBinding'],
  ['delete', '/consumers/{name}/client-bindings/{bindingId}', 'deleteClientBinding'],
  ['patch', '/consumers/{name}/client-bindings/{bindingId}', 'updateClientBinding'],
  ['get', '/consumers/{name}/usage', 'getConsumerUsage'],
  ['post', '/consumers/{name}/unban', 'unbanConsumer'],
  ['get', '/consumers/{name}/billing', 'getConsumerBilling'],
  ['patch', '/consumers/{name}/billing', 'updateConsumerBilling'],
  ['post', '/consumers/{name}/credits/top-ups', 'topUpConsumerCredits'],
  ['put', '/consumers/{name}/credits', 'setConsumerCredits'],
  ['get', '/consumers/{name}/credits/ledger', 'getConsumerCreditLedger'],
  ['post', '/import', 'importConsumers'],
  ['get', '/export', 'exportConsumers'],
  ['post', '/tokens', 'createAdminToken'],
  ['get', '/tokens', 'listAdminTokens'],
  ['post', '/tokens/{id}/revoke', 'revokeAdminToken'],
  ['get', '/audit', 'listAuditEntries'],
  ['get', '/consumers/{name}/usage/history', 'getConsumerUsageHistory'],
  ['get', '/usage/history', 'getFleetUsageHistory'],
  ['get', '/usage/top', 'getTopConsumers'],
  ['get', '/usage/export', 'exportUsage'],
  ['get', '/plan-requests', 'listPlanRequests'],
  ['post', '/plan-requests', 'createPlanRequest'],
  ['post', '/plan-requests/{id}/approve', 'approvePlanRequest'],
  ['post', '/plan-requests/{id}/decline', 'declinePlanRequest'],
  ['get', '/token', 'getCurrentToken'],
  ['post', '/audit/events', 'recordAuditEvent'],
  ['get', '/consumers/{name}/webhook-endpoints', 'listWebhookEndpoints'],
  ['post', '/consumers/{name}/webhook-endpoints', 'createWebhookEndpoint'],
  ['get', '/consumers/{name}/webhook-endpoints/{id}', 'getWebhookEndpoint'],
  ['patch', '/consumers/{name}/webhook-endpoints/{id}', 'updateWebhookEndpoint'],
  ['delete', '/consumers/{name}/webhook-endpoints/{id}', 'deleteWebhookEndpoint'],
  ['post', '/consumers/{name}/webhook-endpoints/{id}/rotate-secret', 'rotateWebhookEndpointSecret'],
  ['post', '/consumers/{name}/webhook-endpoints/{id}/test', 'testWebhookEndpoint'],
  ['get', '/consumers/{name}/webhook-endpoints/{id}/deliveries', 'listWebhookDeliveries'],
  ['post', '/consumers/{name}/webhook-endpoints/{id}/deliveries/{deliveryId}/redeliver', 'redeliverWebhookDelivery'],
  ['get', '/webhook-endpoints', 'listFleetWebhookEndpoints'],
  ['post', '/webhook-endpoints', 'createFleetWebhookEndpoint'],
  ['get', '/webhook-endpoints/failing', 'listFailingWebhookEndpoints'],
  ['get', '/webhook-endpoints/{id}', 'getFleetWebhookEndpoint'],
  ['patch', '/webhook-endpoints/{id}', 'updateFleetWebhookEndpoint'],
  ['delete', '/webhook-endpoints/{id}', 'deleteFleetWebhookEndpoint'],
  ['post', '/webhook-endpoints/{id}/rotate-secret', 'rotateFleetWebhookEndpointSecret'],
  ['get', '/webhook-endpoints/{id}/deliveries', 'listFleetWebhookDeliveries'],
  ['post', '/webhook-endpoints/{id}/test', 'testFleetWebhookEndpoint'],
  ['get', '/consumers/{name}/threshold-events', 'listThresholdEvents'],
  ['post', '/sessions/oidc', 'createPersonSession'],
  ['delete', '/sessions/current', 'endPersonSession'],
  ['post', '/webhook-endpoints/{id}/deliveries/{deliveryId}/redeliver', 'redeliverFleetWebhookDelivery'],
] as const;
/** Webhook endpoints on loopback's discard port (nothing listens there). */
const HOOK_URL = 'http://127.0.0.1:9/hook';
type OperationId = (typeof OPERATIONS)[number][2];
const TOKEN_OPERATIONS: readonly OperationId[] = [
  'createAdminToken',
  'listAdminTokens',
  'revokeAdminToken',
  'listAuditEntries',
  'getCurrentToken',
  'recordAuditEvent',
  'createPersonSession',
  'endPersonSession',
];
/**
 * The methods whose operations take a body, and so document 413 and 415: a GET or a DELETE takes none (the server
 * would refuse a body on them all the same, but none is meant, so none is documented), a bodiless POST does take an
 * optional one.
 */
const takesBody = (method: string) => method !== 'get' && method !== 'delete';
/** Takes no admin token (docs/sso.md): its 401 is the ID token's, tested in person-sessions.e2e-spec.ts. */
const WITHOUT_ADMIN_TOKEN: readonly OperationId[] = ['createPersonSession'];

/** Ids change from run to run: messages are compared with every UUID in them replaced. */
const withoutIds = (message: string) =>
  message.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>');

/**
 * The admin API's OpenAPI document (issue #22, points 6 and 7): every operation has a summary and a readable
 * id, its examples are messages it really sends (each one is produced here by a real request), and it says
 * what the server does: optional bodies, 415, the export's schema, null limits, an opaque token.
 */
describe("the admin API's OpenAPI document", () => {
  // The issuer of the client-binding examples: configured (never asked: no token is sent), so that binding it works.
  const stack = withStack({
    petsUrl: 'http://127.0.0.1:1',
    gateway: {
      env: {
        OAUTH_ISSUERS: JSON.stringify([{ issuer: EXAMPLE_ISSUER, audience: 'https://api.example' }]),
        OUTBOUND_ALLOW_LIST: '127.0.0.1/32',
      },
    },
  });

  let doc: Document;
  const admin = (method: string, path: string, body?: unknown, token?: string | null) =>
    adminCall(stack.gateway, method, path, body, token);
  const op = (id: OperationId) => {
    const [method, path] = OPERATIONS.find(([, , operationId]) => operationId === id)!;
    return doc.paths[path][method];
  };
  const resolve = (response: Response): Response =>
    response.$ref ? doc.components.responses[response.$ref.slice('#/components/responses/'.length)] : response;
  const examples = (id: OperationId, status: number): Example[] => {
    const response = op(id).responses[status];
    if (!response) return [];
    const media = resolve(response).content!['application/json'];
    return media.example ? [media.example] : Object.values(media.examples ?? {}).map((e) => e.value);
  };

  beforeAll(async () => {
    doc = (await call(`${stack.gateway.adminUrl}/docs-json`)).body as Document;
  });

  it('gives every operation a summary and a readable operation id, tagged with a declared tag', () => {
    const listed = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, o]) => [method, path, o.operationId]),
    );
    expect(listed.sort()).toEqual(OPERATIONS.map((o) => [...o]).sort());
    for (const [, , id] of OPERATIONS) {
      expect(op(id).summary).toMatch(/^[A-Z].{10,}/);
      expect(op(id).tags).toEqual([TOKEN_OPERATIONS.includes(id) ? 'tokens' : 'consumers']);
      expect(op(id).security).toEqual(WITHOUT_ADMIN_TOKEN.includes(id) ? [] : [{ bearer: [] }]);
    }
    expect(doc.tags).toEqual([
      { name: 'consumers', description: expect.stringMatching(/.{20,}/) },
      { name: 'tokens', description: expect.stringMatching(/.{20,}/) },
    ]);
  });

  it('names its servers (a relative one first, then the loopback default), an opaque bearer token and a semantic version', () => {
    expect(doc.servers!.map((s) => s.url)).toEqual(['/', 'http://127.0.0.1:3002']);
    expect(doc.components.securitySchemes.bearer).toEqual({
      type: 'http',
      scheme: 'bearer',
      description: expect.any(String),
    });
    expect(doc.info.version).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("says what the server does: optional bodies where none is needed, the export's schema, effectiveLimits always there", async () => {
    expect(op('issueKey').requestBody?.required).toBe(false);
    expect(op('rotateKey').requestBody?.required).toBe(false);
    expect(op('rotateWebhookEndpointSecret').requestBody?.required).toBe(false);
    expect(op('rotateFleetWebhookEndpointSecret').requestBody?.required).toBe(false);
    expect(op('createConsumer').requestBody?.required).toBe(true);
    const exported = op('exportConsumers').responses['200'].content!['application/json'].schema!;
    expect(exported.$ref).toBe('#/components/schemas/ExportPageResponse');
    expect(doc.components.schemas.ExportPageResponse.required!.sort()).toEqual(['consumers', 'next']);
    expect(doc.components.schemas.ConsumerResponse.required).toEqual(
      expect.arrayContaining(['limits', 'effectiveLimits']),
    );
    // And the server indeed takes no body on those two.
    await admin('POST', '/consumers', { name: 'bodiless', plan: 'free' });
    const issued = await call(`${stack.gateway.adminUrl}/consumers/bodiless/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.gateway.adminToken}` },
    });
    expect(issued.status).toBe(201);
    const rotated = await call(
      `${stack.gateway.adminUrl}/consumers/bodiless/keys/${(issued.body as { id: string }).id}/rotate`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.gateway.adminToken}` },
      },
    );
    expect(rotated.status).toBe(201);
  });

  it('documents 401, 500 and 503 on every operation, 413 and 415 on every one that takes a body, not on a GET or DELETE', () => {
    for (const [method, , id] of OPERATIONS) {
      const statuses = Object.keys(op(id).responses);
      // Listing the tokens and reading one's own take no input: nothing of them can be a 400.
      expect(statuses).toEqual(
        expect.arrayContaining([
          ...(id === 'listAdminTokens' || id === 'getCurrentToken' || id === 'endPersonSession' ? [] : ['400']),
          '401',
          '500',
          '503',
        ]),
      );
      if (takesBody(method)) expect(statuses).toEqual(expect.arrayContaining(['413', '415']));
      else expect(statuses).not.toEqual(expect.arrayContaining(['413']));
      for (const status of statuses.filter((s) => s >= '400')) {
        for (const example of examples(id, Number(status))) expect(example.status).toBe(Number(status));
      }
    }
  });

  it('shows UNAUTHORIZED for 401 and NOT_FOUND naming the consumer for 404, never a VALIDATION_FAILED example', () => {
    for (const [, path, id] of OPERATIONS) {
      if (!WITHOUT_ADMIN_TOKEN.includes(id))
        expect(examples(id, 401).map((e) => e.code)).toEqual(['UNAUTHORIZED', 'UNAUTHORIZED']);
      if (path.includes('{name}')) {
        expect(examples(id, 404).length).toBeGreaterThan(0);
        for (const example of examples(id, 404))
          expect(example).toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('"acme"') });
      }
      for (const example of examples(id, 400)) expect(example.message).not.toMatch(/from 1 to 100$/);
    }
    // Nowhere, the Error schema's own example included: the public API's `limit` rule is not this API's.
    expect(JSON.stringify(doc).match(/.{60}from 1 to 100(?!0).{20}/g)).toBeNull();
  });

  /** For each documented example, the request that gives it; every example has one, and each one is sent. */
  const refusals: Record<number, (id: OperationId) => Array<[string, () => Promise<Reply>]>> = {
    401: (id) => [
      [MISSING_TOKEN_MESSAGE, () => send(id, undefined, null)],
      [INVALID_TOKEN_MESSAGE, () => send(id, undefined, 'wrong-token')],
    ],
    413: (id) => [
      [
        'The request body exceeds the limit of 1048576 bytes.',
        () => send(id, JSON.stringify({ padding: 'x'.repeat(1024 * 1024) })),
      ],
    ],
    415: (id) => [
      [
        'Content-Type "text/plain" is not supported: send application/json.',
        () => send(id, 'hello', undefined, 'text/plain'),
      ],
      ['A request body needs Content-Type: application/json.', () => send(id, 'hello', undefined, null)],
    ],
  };
  /** One request of operation `id` against consumer acme (and a key of it), with a raw body and headers. */
  const send = (
    id: OperationId,
    body?: string,
    token?: string | null,
    contentType: string | null = 'application/json',
  ) => {
    const [method, path] = OPERATIONS.find(([, , operationId]) => operationId === id)!;
    const headers: Record<string, string> = {};
    if (token !== null) headers.authorization = `Bearer ${token ?? stack.gateway.adminToken}`;
    if (body !== undefined && contentType !== null) headers['content-type'] = contentType;
    const url = path
      .replace('{id}', '00000000-0000-4000-8000-000000000000')
      .replace('{name}', 'acme')
      .replace('{keyId}', '00000000-0000-4000-8000-000000000000')
      .replace('{bindingId}', '00000000-0000-4000-8000-000000000000');
    // A string body would get fetch's own text/plain type: bytes get none.
    const payload = body !== undefined && contentType === null ? new TextEncoder().encode(body) : body;
    return call(`${stack.gateway.adminUrl}${url}`, { method: method.toUpperCase(), headers, body: payload });
  };

  it('gives 401, 413 and 415 examples that are the answers of real requests', async () => {
    for (const [method, , id] of OPERATIONS) {
      for (const status of takesBody(method) ? [401, 413, 415] : [401]) {
        if (status === 401 && WITHOUT_ADMIN_TOKEN.includes(id)) continue;
        const documented = examples(id, status).map((e) => e.message);
        const produced = refusals[status](id);
        expect(documented.sort()).toEqual(produced.map(([message]) => message).sort());
        for (const [message, request] of produced) {
          const reply = await request();
          expectErrorBody(reply, status);
          expect((reply.body as Example).message).toBe(message);
        }
      }
    }
  });

  it('gives 400, 404 and 409 examples that are the answers of real requests, each with its code', async () => {
    const hashElsewhere = hashApiKey(generateApiKey());
    const raw = (method: string, path: string, body: string) =>
      call(`${stack.gateway.adminUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${stack.gateway.adminToken}`, 'content-type': 'application/json' },
        body,
      });
    const keyOf = async (name: string, state = 'active') =>
      (
        (await admin('GET', `/consumers/${name}`)).body as {
          keys: Array<{ id: string; state: string; replacedBy: string | null }>;
        }
      ).keys.find((k) => k.state === state && k.replacedBy === null)!.id;
    const unknownKey = '00000000-0000-4000-8000-000000000000';
    const badName =
      (method: string, suffix = '', body?: unknown) =>
      () =>
        admin(method, `/consumers/-bad${suffix}`, body);
    const malformed = (method: string, path: string) => () => raw(method, path, '{"plan": ');
    const notObject = (method: string, path: string) => () => raw(method, path, '[]');
    const nameRule = 'name must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit';
    const json = 'The request body is not valid JSON.';
    const object = 'The request body must be a JSON object.';
    const noAcme = 'No consumer named "acme".';
    const noKey = 'Consumer "acme" has no key <id>.';
    const hooks = '/consumers/acme/webhook-endpoints';
    const oneHook = `${hooks}/${unknownKey}`;
    const fleetHook = `/webhook-endpoints/${unknownKey}`;
    const noFleetHook = 'No fleet-wide webhook endpoint <id>.';
    const noHook = 'Consumer "acme" has no webhook endpoint <id>.';
    /** The 400s of the webhook routes (acme exists by then, none of its endpoints does). */
    const webhookBadRequests = (): Array<[OperationId, number, string, () => Promise<Reply>]> => {
      const idRule = 'id must be a UUID';
      const deliveryIdRule = 'deliveryId must be a UUID';
      const noDelivery = 'Webhook endpoint <id> of consumer "acme" has no delivery <id>.';
      const noFleetDelivery = 'Fleet-wide webhook endpoint <id> has no delivery <id>.';
      /** A new endpoint of `base` (a consumer's, or the fleet's): its path. */
      const newHook = async (base: string): Promise<string> => {
        const reply = await admin('POST', base, { url: HOOK_URL });
        expect(reply.status).toBe(201);
        return `${base}/${(reply.body as { id: string }).id}`;
      };
      const bodyRules = (
        id: OperationId,
        method: string,
        path: string,
      ): Array<[OperationId, number, string, () => Promise<Reply>]> => [
        [id, 400, 'url must be an absolute http: or https: URL', () => admin(method, path, { url: 'ftp://x.example' })],
        [
          id,
          400,
          'url is not a target webhooks may be sent to (metadata): 169.254.169.254: metadata address, refused',
          () => admin(method, path, { url: 'http://169.254.169.254/latest' }),
        ],
        [
          id,
          400,
          'url is not a target webhooks may be sent to (private): 10.1.2.3: private address, refused',
          () => admin(method, path, { url: 'http://10.1.2.3/hook' }),
        ],
        [
          id,
          400,
          'each event type must be one of quota.threshold_crossed, credits.low_balance, credits.exhausted',
          () => admin(method, path, { url: HOOK_URL, eventTypes: ['pet.created'] }),
        ],
        [
          id,
          400,
          'description must be at most 200 characters',
          () => admin(method, path, { url: HOOK_URL, description: 'x'.repeat(201) }),
        ],
        [id, 400, json, malformed(method, path)],
        [id, 400, object, notObject(method, path)],
      ];
      const pageRules = (id: OperationId, path: string): Array<[OperationId, number, string, () => Promise<Reply>]> => [
        [id, 400, 'limit must be an integer from 1 to 1000', () => admin('GET', `${path}?limit=0`)],
        [id, 400, 'after must be the next of a previous page', () => admin('GET', `${path}?after=x`)],
      ];
      return [
        ['getWebhookEndpoint', 404, noHook, () => admin('GET', oneHook)],
        ['updateWebhookEndpoint', 404, noHook, () => admin('PATCH', oneHook, { description: 'x' })],
        ['deleteWebhookEndpoint', 404, noHook, () => admin('DELETE', oneHook)],
        ['rotateWebhookEndpointSecret', 404, noHook, () => admin('POST', `${oneHook}/rotate-secret`)],
        ['testWebhookEndpoint', 404, noHook, () => admin('POST', `${oneHook}/test`)],
        ['listWebhookDeliveries', 404, noHook, () => admin('GET', `${oneHook}/deliveries`)],
        ['listWebhookEndpoints', 400, nameRule, badName('GET', '/webhook-endpoints')],
        ['createWebhookEndpoint', 400, nameRule, badName('POST', '/webhook-endpoints', { url: HOOK_URL })],
        ...bodyRules('createWebhookEndpoint', 'POST', hooks),
        ['getWebhookEndpoint', 400, nameRule, badName('GET', `/webhook-endpoints/${unknownKey}`)],
        ['getWebhookEndpoint', 400, idRule, () => admin('GET', `${hooks}/x`)],
        ['updateWebhookEndpoint', 400, nameRule, badName('PATCH', `/webhook-endpoints/${unknownKey}`, {})],
        ['updateWebhookEndpoint', 400, idRule, () => admin('PATCH', `${hooks}/x`, {})],
        ...bodyRules('updateWebhookEndpoint', 'PATCH', oneHook),
        ['deleteWebhookEndpoint', 400, nameRule, badName('DELETE', `/webhook-endpoints/${unknownKey}`)],
        ['deleteWebhookEndpoint', 400, idRule, () => admin('DELETE', `${hooks}/x`)],
        [
          'rotateWebhookEndpointSecret',
          400,
          nameRule,
          badName('POST', `/webhook-endpoints/${unknownKey}/rotate-secret`),
        ],
        ['rotateWebhookEndpointSecret', 400, idRule, () => admin('POST', `${hooks}/x/rotate-secret`)],
        [
          'rotateWebhookEndpointSecret',
          400,
          'overlapSeconds must be at most 604800',
          () => admin('POST', `${oneHook}/rotate-secret`, { overlapSeconds: 604_801 }),
        ],
        ['rotateWebhookEndpointSecret', 400, json, malformed('POST', `${oneHook}/rotate-secret`)],
        ['rotateWebhookEndpointSecret', 400, object, notObject('POST', `${oneHook}/rotate-secret`)],
        ['testWebhookEndpoint', 400, nameRule, badName('POST', `/webhook-endpoints/${unknownKey}/test`)],
        ['testWebhookEndpoint', 400, idRule, () => admin('POST', `${hooks}/x/test`)],
        ['listWebhookDeliveries', 400, nameRule, badName('GET', `/webhook-endpoints/${unknownKey}/deliveries`)],
        ['listWebhookDeliveries', 400, idRule, () => admin('GET', `${hooks}/x/deliveries`)],
        ...pageRules('listWebhookDeliveries', `${oneHook}/deliveries`),
        ['redeliverWebhookDelivery', 404, noHook, () => admin('POST', `${oneHook}/deliveries/${unknownKey}/redeliver`)],
        [
          'redeliverWebhookDelivery',
          404,
          noDelivery,
          async () => admin('POST', `${await newHook(hooks)}/deliveries/${unknownKey}/redeliver`),
        ],
        [
          'redeliverWebhookDelivery',
          400,
          nameRule,
          badName('POST', `/webhook-endpoints/${unknownKey}/deliveries/${unknownKey}/redeliver`),
        ],
        ['redeliverWebhookDelivery', 400, idRule, () => admin('POST', `${hooks}/x/deliveries/${unknownKey}/redeliver`)],
        ['redeliverWebhookDelivery', 400, deliveryIdRule, () => admin('POST', `${oneHook}/deliveries/x/redeliver`)],
        ...bodyRules('createFleetWebhookEndpoint', 'POST', '/webhook-endpoints'),
        ['getFleetWebhookEndpoint', 400, idRule, () => admin('GET', '/webhook-endpoints/x')],
        ['updateFleetWebhookEndpoint', 400, idRule, () => admin('PATCH', '/webhook-endpoints/x', {})],
        ...bodyRules('updateFleetWebhookEndpoint', 'PATCH', fleetHook),
        ['deleteFleetWebhookEndpoint', 400, idRule, () => admin('DELETE', '/webhook-endpoints/x')],
        ['rotateFleetWebhookEndpointSecret', 400, idRule, () => admin('POST', '/webhook-endpoints/x/rotate-secret')],
        [
          'rotateFleetWebhookEndpointSecret',
          400,
          'overlapSeconds must be at most 604800',
          () => admin('POST', `${fleetHook}/rotate-secret`, { overlapSeconds: 604_801 }),
        ],
        ['rotateFleetWebhookEndpointSecret', 400, json, malformed('POST', `${fleetHook}/rotate-secret`)],
        ['rotateFleetWebhookEndpointSecret', 400, object, notObject('POST', `${fleetHook}/rotate-secret`)],
        ['listFleetWebhookDeliveries', 400, idRule, () => admin('GET', '/webhook-endpoints/x/deliveries')],
        ...pageRules('listFleetWebhookDeliveries', `${fleetHook}/deliveries`),
        ['testFleetWebhookEndpoint', 400, idRule, () => admin('POST', '/webhook-endpoints/x/test')],
        ['listThresholdEvents', 400, nameRule, badName('GET', '/threshold-events')],
        ...pageRules('listThresholdEvents', '/consumers/acme/threshold-events'),
        [
          'listThresholdEvents',
          400,
          'policy must be one of day, month, credits',
          () => admin('GET', '/consumers/acme/threshold-events?policy=week'),
        ],
        [
          'listThresholdEvents',
          400,
          'type must be one of quota.threshold_crossed, credits.low_balance, credits.exhausted',
          () => admin('GET', '/consumers/acme/threshold-events?type=pet.created'),
        ],
        [
          'redeliverFleetWebhookDelivery',
          404,
          noFleetHook,
          () => admin('POST', `${fleetHook}/deliveries/${unknownKey}/redeliver`),
        ],
        [
          'redeliverFleetWebhookDelivery',
          404,
          noFleetDelivery,
          async () => admin('POST', `${await newHook('/webhook-endpoints')}/deliveries/${unknownKey}/redeliver`),
        ],
        [
          'redeliverFleetWebhookDelivery',
          400,
          idRule,
          () => admin('POST', `/webhook-endpoints/x/deliveries/${unknownKey}/redeliver`),
        ],
        [
          'redeliverFleetWebhookDelivery',
          400,
          deliveryIdRule,
          () => admin('POST', `${fleetHook}/deliveries/x/redeliver`),
        ],
      ];
    };

    // 404s first: acme does not exist yet.
    const notFound: Array<[OperationId, string, () => Promise<Reply>]> = [
      ['getConsumer', noAcme, () => admin('GET', '/consumers/acme')],
      ['updateConsumer', noAcme, () => admin('PATCH', '/consumers/acme', { plan: 'pro' })],
      ['disableConsumer', noAcme, () => admin('POST', '/consumers/acme/disable')],
      ['enableConsumer', noAcme, () => admin('POST', '/consumers/acme/enable')],
      ['issueKey', noAcme, () => admin('POST', '/consumers/acme/keys', {})],
      ['revokeConsumerKeys', noAcme, () => admin('POST', '/consumers/acme/revoke')],
      ['revokeKey', noAcme, () => admin('POST', `/consumers/acme/keys/${unknownKey}/revoke`)],
      ['rotateKey', noAcme, () => admin('POST', `/consumers/acme/keys/${unknownKey}/rotate`, {})],
      ['getConsumerUsage', noAcme, () => admin('GET', '/consumers/acme/usage')],
      ['listClientBindings', noAcme, () => admin('GET', '/consumers/acme/client-bindings')],
      [
        'createClientBinding',
        noAcme,
        () => admin('POST', '/consumers/acme/client-bindings', { issuer: EXAMPLE_ISSUER, clientId: 'x' }),
      ],
      ['deleteClientBinding', noAcme, () => admin('DELETE', `/consumers/acme/client-bindings/${unknownKey}`)],
      [
        'updateClientBinding',
        noAcme,
        () => admin('PATCH', `/consumers/acme/client-bindings/${unknownKey}`, { allowedAddresses: null }),
      ],
      ['updateKey', noAcme, () => admin('PATCH', `/consumers/acme/keys/${unknownKey}`, { allowedAddresses: null })],
      ['getConsumerUsageHistory', noAcme, () => admin('GET', '/consumers/acme/usage/history')],
      ['unbanConsumer', noAcme, () => admin('POST', '/consumers/acme/unban')],
      ['getConsumerBilling', noAcme, () => admin('GET', '/consumers/acme/billing')],
      ['updateConsumerBilling', noAcme, () => admin('PATCH', '/consumers/acme/billing', { perMonth: 5 })],
      [
        'topUpConsumerCredits',
        noAcme,
        () => admin('POST', '/consumers/acme/credits/top-ups', { amount: 5, reason: 'x' }),
      ],
      ['setConsumerCredits', noAcme, () => admin('PUT', '/consumers/acme/credits', { balance: 5, reason: 'x' })],
      ['getConsumerCreditLedger', noAcme, () => admin('GET', '/consumers/acme/credits/ledger')],
      ['revokeAdminToken', 'No admin token <id>.', () => admin('POST', `/tokens/${unknownKey}/revoke`)],
      [
        'createPlanRequest',
        noAcme,
        () => admin('POST', '/plan-requests', { consumer: 'acme', requestedPlan: 'pro', expectedVolume: '10 a day' }),
      ],
      ['approvePlanRequest', 'No plan request <id>.', () => admin('POST', `/plan-requests/${unknownKey}/approve`)],
      [
        'declinePlanRequest',
        'No plan request <id>.',
        () => admin('POST', `/plan-requests/${unknownKey}/decline`, { note: 'no' }),
      ],
      ['listWebhookEndpoints', noAcme, () => admin('GET', hooks)],
      ['createWebhookEndpoint', noAcme, () => admin('POST', hooks, { url: HOOK_URL })],
      ['getWebhookEndpoint', noAcme, () => admin('GET', oneHook)],
      ['updateWebhookEndpoint', noAcme, () => admin('PATCH', oneHook, { description: 'x' })],
      ['deleteWebhookEndpoint', noAcme, () => admin('DELETE', oneHook)],
      ['rotateWebhookEndpointSecret', noAcme, () => admin('POST', `${oneHook}/rotate-secret`)],
      ['testWebhookEndpoint', noAcme, () => admin('POST', `${oneHook}/test`)],
      ['listWebhookDeliveries', noAcme, () => admin('GET', `${oneHook}/deliveries`)],
      ['redeliverWebhookDelivery', noAcme, () => admin('POST', `${oneHook}/deliveries/${unknownKey}/redeliver`)],
      ['getFleetWebhookEndpoint', noFleetHook, () => admin('GET', fleetHook)],
      ['updateFleetWebhookEndpoint', noFleetHook, () => admin('PATCH', fleetHook, { description: 'x' })],
      ['deleteFleetWebhookEndpoint', noFleetHook, () => admin('DELETE', fleetHook)],
      ['rotateFleetWebhookEndpointSecret', noFleetHook, () => admin('POST', `${fleetHook}/rotate-secret`)],
      ['listFleetWebhookDeliveries', noFleetHook, () => admin('GET', `${fleetHook}/deliveries`)],
      ['testFleetWebhookEndpoint', noFleetHook, () => admin('POST', `${fleetHook}/test`)],
      ['listThresholdEvents', noAcme, () => admin('GET', '/consumers/acme/threshold-events')],
    ];
    expect((await admin('POST', '/consumers', { name: 'other', plan: 'free' })).status).toBe(201);
    expect(
      (
        await admin('POST', '/import', {
          consumers: [{ name: 'other', plan: 'free', keys: [{ keyHash: hashElsewhere }] }],
        })
      ).status,
    ).toBe(200);
    const sent: Array<[OperationId, number, string, string]> = [];
    for (const [id, message, request] of notFound) {
      const reply = await request();
      expectErrorBody(reply, 404, 'NOT_FOUND');
      expect(withoutIds((reply.body as Example).message)).toBe(message);
      sent.push([id, 404, 'NOT_FOUND', message]);
    }

    expect((await admin('POST', '/consumers', { name: 'acme', plan: 'free' })).status).toBe(201);
    const rotatedAway = await keyOf('acme');
    const successor = (await admin('POST', `/consumers/acme/keys/${rotatedAway}/rotate`, { overlapSeconds: 60 }))
      .body as { key: { id: string } };
    const revoked = successor.key.id;
    await admin('POST', `/consumers/acme/keys/${revoked}/revoke`);

    const badEmail = `email ${EMAIL_ADDRESS_RULE}`;
    const badRequests: Array<[OperationId, number, string, () => Promise<Reply>]> = [
      ['revokeKey', 404, noKey, () => admin('POST', `/consumers/acme/keys/${unknownKey}/revoke`)],
      ['rotateKey', 404, noKey, () => admin('POST', `/consumers/acme/keys/${unknownKey}/rotate`, {})],
      [
        'deleteClientBinding',
        404,
        'Consumer "acme" has no client binding <id>.',
        () => admin('DELETE', `/consumers/acme/client-bindings/${unknownKey}`),
      ],
      [
        'updateClientBinding',
        404,
        'Consumer "acme" has no client binding <id>.',
        () => admin('PATCH', `/consumers/acme/client-bindings/${unknownKey}`, { allowedAddresses: null }),
      ],
      [
        'updateClientBinding',
        400,
        ALLOWED_ADDRESSES_RULE,
        () => admin('PATCH', `/consumers/acme/client-bindings/${unknownKey}`, { allowedAddresses: ['10.1'] }),
      ],
      [
        'updateClientBinding',
        400,
        'bindingId must be a UUID',
        () => admin('PATCH', '/consumers/acme/client-bindings/not-a-uuid', { allowedAddresses: null }),
      ],
      [
        'updateClientBinding',
        400,
        nameRule,
        badName('PATCH', `/client-bindings/${unknownKey}`, { allowedAddresses: null }),
      ],
      ['updateClientBinding', 400, json, malformed('PATCH', `/consumers/acme/client-bindings/${unknownKey}`)],
      ['updateClientBinding', 400, object, notObject('PATCH', `/consumers/acme/client-bindings/${unknownKey}`)],
      ['updateKey', 404, noKey, () => admin('PATCH', `/consumers/acme/keys/${unknownKey}`, { allowedAddresses: null })],
      [
        'updateKey',
        400,
        ALLOWED_ADDRESSES_RULE,
        () => admin('PATCH', `/consumers/acme/keys/${unknownKey}`, { allowedAddresses: [] }),
      ],
      [
        'updateKey',
        400,
        'keyId must be a UUID',
        () => admin('PATCH', '/consumers/acme/keys/not-a-uuid', { allowedAddresses: null }),
      ],
      ['updateKey', 400, json, malformed('PATCH', `/consumers/acme/keys/${unknownKey}`)],
      ['updateKey', 400, object, notObject('PATCH', `/consumers/acme/keys/${unknownKey}`)],
      [
        'updateConsumer',
        400,
        ALLOWED_ADDRESSES_RULE,
        () => admin('PATCH', '/consumers/acme', { allowedAddresses: ['10.0.0.0/33'] }),
      ],
      ['listClientBindings', 400, nameRule, badName('GET', '/client-bindings')],
      [
        'createClientBinding',
        400,
        `issuer must be one of the configured issuers (OAUTH_ISSUERS): ${EXAMPLE_ISSUER}`,
        () => admin('POST', '/consumers/acme/client-bindings', { issuer: 'https://idp.other.example', clientId: 'x' }),
      ],
      [
        'createClientBinding',
        400,
        'clientId must be at most 255 characters long',
        () => admin('POST', '/consumers/acme/client-bindings', { issuer: EXAMPLE_ISSUER, clientId: 'x'.repeat(256) }),
      ],
      [
        'createClientBinding',
        400,
        nameRule,
        badName('POST', '/client-bindings', { issuer: EXAMPLE_ISSUER, clientId: 'x' }),
      ],
      ['createClientBinding', 400, json, malformed('POST', '/consumers/acme/client-bindings')],
      ['createClientBinding', 400, object, notObject('POST', '/consumers/acme/client-bindings')],
      [
        'deleteClientBinding',
        400,
        'bindingId must be a UUID',
        () => admin('DELETE', '/consumers/acme/client-bindings/not-a-uuid'),
      ],
      ['deleteClientBinding', 400, nameRule, badName('DELETE', `/client-bindings/${unknownKey}`)],
      ['listConsumers', 400, 'limit must be an integer from 1 to 1000', () => admin('GET', '/consumers?limit=0')],
      [
        'listConsumers',
        400,
        'after must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit',
        () => admin('GET', '/consumers?after=-x'),
      ],
      ['listConsumers', 400, badEmail, () => admin('GET', '/consumers?email=ada%40')],
      ['exportConsumers', 400, 'limit must be an integer from 1 to 1000', () => admin('GET', '/export?limit=1001')],
      [
        'exportConsumers',
        400,
        'after must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit',
        () => admin('GET', '/export?after=-x'),
      ],
      [
        'createConsumer',
        400,
        'plan must be one of free, pro, business, enterprise',
        () => admin('POST', '/consumers', { plan: 'gold' }),
      ],
      [
        'createConsumer',
        400,
        "The enterprise plan needs the consumer's agreed limits (perMinute and perDay).",
        () => admin('POST', '/consumers', { plan: 'enterprise' }),
      ],
      [
        'createConsumer',
        400,
        'limits.perDay is required',
        () => admin('POST', '/consumers', { plan: 'enterprise', limits: { perMinute: 5 } }),
      ],
      [
        'createConsumer',
        400,
        'expiresAt must be in the future',
        () => admin('POST', '/consumers', { plan: 'free', expiresAt: '2001-01-01T00:00:00Z' }),
      ],
      ['createConsumer', 400, badEmail, () => admin('POST', '/consumers', { plan: 'free', email: 'Ada <ada@x.io>' })],
      ['createConsumer', 400, json, malformed('POST', '/consumers')],
      ['createConsumer', 400, object, notObject('POST', '/consumers')],
      ['getConsumer', 400, nameRule, badName('GET')],
      [
        'updateConsumer',
        400,
        'plan must be one of free, pro, business, enterprise',
        () => admin('PATCH', '/consumers/acme', { plan: 'gold' }),
      ],
      [
        'updateConsumer',
        400,
        "The enterprise plan needs the consumer's agreed limits (perMinute and perDay).",
        () => admin('PATCH', '/consumers/acme', { plan: 'enterprise' }),
      ],
      [
        'updateConsumer',
        400,
        'limits.perMinute must be at least 1',
        () => admin('PATCH', '/consumers/acme', { limits: { perMinute: 0, perDay: 10 } }),
      ],
      ['updateConsumer', 400, badEmail, () => admin('PATCH', '/consumers/acme', { email: 'a@b.io, c@d.io' })],
      ['updateConsumer', 400, nameRule, badName('PATCH', '', { plan: 'pro' })],
      ['updateConsumer', 400, json, malformed('PATCH', '/consumers/acme')],
      ['updateConsumer', 400, object, notObject('PATCH', '/consumers/acme')],
      ['getConsumerBilling', 400, nameRule, badName('GET', '/billing')],
      [
        'updateConsumerBilling',
        400,
        'Give billingAnchor, perMonth, creditRefill, costs or alerts.',
        () => admin('PATCH', '/consumers/acme/billing', {}),
      ],
      [
        'updateConsumerBilling',
        400,
        'billingAnchor must be an ISO 8601 date-time',
        () => admin('PATCH', '/consumers/acme/billing', { billingAnchor: 'tomorrow' }),
      ],
      [
        'updateConsumerBilling',
        400,
        'perMonth must be at least 1',
        () => admin('PATCH', '/consumers/acme/billing', { perMonth: 0 }),
      ],
      [
        'updateConsumerBilling',
        400,
        'creditRefill: a refill must be {"amount": 1..1000000000, "every": "day" | "month"}',
        () => admin('PATCH', '/consumers/acme/billing', { creditRefill: { amount: 5, every: 'week' } }),
      ],
      [
        'updateConsumerBilling',
        400,
        'costs: unknown operation "deletePet" (one of listPets, createPet, getPet)',
        () => admin('PATCH', '/consumers/acme/billing', { costs: { deletePet: 1 } }),
      ],
      [
        'updateConsumerBilling',
        400,
        'alerts.thresholdsPercent must be in ascending order without repeats',
        () => admin('PATCH', '/consumers/acme/billing', { alerts: { thresholdsPercent: [100, 80] } }),
      ],
      ['updateConsumerBilling', 400, nameRule, badName('PATCH', '/billing', { perMonth: 5 })],
      [
        'topUpConsumerCredits',
        400,
        'amount must be at least 1',
        () => admin('POST', '/consumers/acme/credits/top-ups', { amount: 0, reason: 'x' }),
      ],
      [
        'topUpConsumerCredits',
        400,
        'reason must be 1 to 200 characters',
        () => admin('POST', '/consumers/acme/credits/top-ups', { amount: 5, reason: '' }),
      ],
      ['topUpConsumerCredits', 400, nameRule, badName('POST', '/credits/top-ups', { amount: 5, reason: 'x' })],
      ['topUpConsumerCredits', 400, json, malformed('POST', '/consumers/acme/credits/top-ups')],
      ['topUpConsumerCredits', 400, object, notObject('POST', '/consumers/acme/credits/top-ups')],
      [
        'setConsumerCredits',
        400,
        'balance must be at least 0',
        () => admin('PUT', '/consumers/acme/credits', { balance: -1, reason: 'x' }),
      ],
      [
        'setConsumerCredits',
        400,
        'reason must be 1 to 200 characters',
        () => admin('PUT', '/consumers/acme/credits', { balance: 5, reason: '' }),
      ],
      ['setConsumerCredits', 400, nameRule, badName('PUT', '/credits', { balance: 5, reason: 'x' })],
      ['setConsumerCredits', 400, json, malformed('PUT', '/consumers/acme/credits')],
      ['setConsumerCredits', 400, object, notObject('PUT', '/consumers/acme/credits')],
      [
        'getConsumerCreditLedger',
        400,
        'days must be an integer from 1 to 366',
        () => admin('GET', '/consumers/acme/credits/ledger?days=0'),
      ],
      ['getConsumerCreditLedger', 400, nameRule, badName('GET', '/credits/ledger')],
      ['updateConsumerBilling', 400, json, malformed('PATCH', '/consumers/acme/billing')],
      ['updateConsumerBilling', 400, object, notObject('PATCH', '/consumers/acme/billing')],
      ['disableConsumer', 400, nameRule, badName('POST', '/disable')],
      ['disableConsumer', 400, json, malformed('POST', '/consumers/acme/disable')],
      ['enableConsumer', 400, nameRule, badName('POST', '/enable')],
      ['enableConsumer', 400, json, malformed('POST', '/consumers/acme/enable')],
      [
        'issueKey',
        400,
        'expiresAt must be in the future',
        () => admin('POST', '/consumers/acme/keys', { expiresAt: '2001-01-01T00:00:00Z' }),
      ],
      [
        'issueKey',
        400,
        'expiresAt must be an ISO 8601 date-time',
        () => admin('POST', '/consumers/acme/keys', { expiresAt: 'tomorrow' }),
      ],
      ['issueKey', 400, nameRule, badName('POST', '/keys', {})],
      ['issueKey', 400, json, malformed('POST', '/consumers/acme/keys')],
      ['issueKey', 400, object, notObject('POST', '/consumers/acme/keys')],
      ['revokeConsumerKeys', 400, nameRule, badName('POST', '/revoke')],
      ['revokeConsumerKeys', 400, json, malformed('POST', '/consumers/acme/revoke')],
      ['revokeKey', 400, 'keyId must be a UUID', () => admin('POST', '/consumers/acme/keys/not-a-uuid/revoke')],
      ['revokeKey', 400, nameRule, badName('POST', `/keys/${unknownKey}/revoke`)],
      ['revokeKey', 400, json, malformed('POST', `/consumers/acme/keys/${unknownKey}/revoke`)],
      [
        'rotateKey',
        400,
        'overlapSeconds must be at most 604800',
        () => admin('POST', `/consumers/acme/keys/${rotatedAway}/rotate`, { overlapSeconds: 604_801 }),
      ],
      ['rotateKey', 400, 'keyId must be a UUID', () => admin('POST', '/consumers/acme/keys/not-a-uuid/rotate', {})],
      ['rotateKey', 400, json, malformed('POST', `/consumers/acme/keys/${rotatedAway}/rotate`)],
      ['rotateKey', 400, object, notObject('POST', `/consumers/acme/keys/${rotatedAway}/rotate`)],
      ['getConsumerUsage', 400, nameRule, badName('GET', '/usage')],
      ['unbanConsumer', 400, nameRule, badName('POST', '/unban')],
      ['unbanConsumer', 400, json, malformed('POST', '/consumers/acme/unban')],
      ['importConsumers', 400, 'consumers is required', () => admin('POST', '/import', {})],
      [
        'importConsumers',
        400,
        'consumers takes at most 500 entries per request',
        () =>
          admin('POST', '/import', {
            consumers: Array.from({ length: 501 }, (_, i) => ({ name: `many-${i}`, plan: 'free' })),
          }),
      ],
      [
        'importConsumers',
        400,
        'consumers.0.keys.0.keyHash must be a SHA-256 hex digest',
        () => admin('POST', '/import', { consumers: [{ name: 'acme', plan: 'free', keys: [{ keyHash: 'nope' }] }] }),
      ],
      [
        'createAdminToken',
        400,
        'each scope must be one of consumers:read, consumers:write, keys:write, usage:read, import, export, tokens:admin, audit:read, plan-requests:read, plan-requests:write, plan-requests:review, webhooks:read, webhooks:write',
        () => admin('POST', '/tokens', { name: 'ci', scopes: ['everything'] }),
      ],
      [
        'createAdminToken',
        400,
        'expiresAt must be in the future',
        () => admin('POST', '/tokens', { name: 'ci', scopes: ['consumers:read'], expiresAt: '2001-01-01T00:00:00Z' }),
      ],
      ['createAdminToken', 400, json, malformed('POST', '/tokens')],
      ['createAdminToken', 400, object, notObject('POST', '/tokens')],
      ['revokeAdminToken', 400, 'id must be a UUID', () => admin('POST', '/tokens/not-a-uuid/revoke')],
      ['listAuditEntries', 400, 'limit must be an integer from 1 to 1000', () => admin('GET', '/audit?limit=0')],
      ['listAuditEntries', 400, 'from must be an ISO 8601 date-time', () => admin('GET', '/audit?from=yesterday')],
      [
        'recordAuditEvent',
        400,
        'kind must be one of sign-in, sign-in-failed, lockout, sign-out, identity-linked, identity-unlinked',
        () => admin('POST', '/audit/events', { kind: 'login' }),
      ],
      [
        'recordAuditEvent',
        400,
        'address must be an IPv4 or IPv6 address, or an IPv6 /64 block',
        () => admin('POST', '/audit/events', { kind: 'sign-in', address: '10.0.0.0/8' }),
      ],
      ['recordAuditEvent', 400, json, malformed('POST', '/audit/events')],
      [
        'createPersonSession',
        400,
        'idToken must be a JWT (three base64url segments)',
        () => admin('POST', '/sessions/oidc', { idToken: 'not a jwt' }, null),
      ],
      ['createPersonSession', 400, json, malformed('POST', '/sessions/oidc')],
      ['createPersonSession', 400, object, notObject('POST', '/sessions/oidc')],
      [
        'createPersonSession',
        404,
        'No identity provider is configured for operators (ADMIN_OIDC_ISSUER).',
        () => admin('POST', '/sessions/oidc', { idToken: 'a.b.c' }, null),
      ],
      ['recordAuditEvent', 400, object, notObject('POST', '/audit/events')],
      [
        'listPlanRequests',
        400,
        'status must be one of pending, approved, declined',
        () => admin('GET', '/plan-requests?status=open'),
      ],
      [
        'listPlanRequests',
        400,
        'consumer must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit',
        () => admin('GET', '/plan-requests?consumer=-x'),
      ],
      [
        'listPlanRequests',
        400,
        'limit must be an integer from 1 to 1000',
        () => admin('GET', '/plan-requests?limit=0'),
      ],
      [
        'listPlanRequests',
        400,
        'after must be the next of a previous page',
        () => admin('GET', '/plan-requests?after=x'),
      ],
      [
        'createPlanRequest',
        400,
        'requestedPlan must be one of free, pro, business, enterprise',
        () => admin('POST', '/plan-requests', { consumer: 'acme', requestedPlan: 'gold', expectedVolume: '10' }),
      ],
      [
        'createPlanRequest',
        400,
        'expectedVolume must be at most 200 characters',
        () =>
          admin('POST', '/plan-requests', { consumer: 'acme', requestedPlan: 'pro', expectedVolume: 'x'.repeat(201) }),
      ],
      [
        'createPlanRequest',
        400,
        'message must be at most 2000 characters',
        () =>
          admin('POST', '/plan-requests', {
            consumer: 'acme',
            requestedPlan: 'pro',
            expectedVolume: '10',
            message: 'x'.repeat(2001),
          }),
      ],
      ['createPlanRequest', 400, json, malformed('POST', '/plan-requests')],
      ['createPlanRequest', 400, object, notObject('POST', '/plan-requests')],
      ['approvePlanRequest', 400, 'id must be a UUID', () => admin('POST', '/plan-requests/not-a-uuid/approve')],
      [
        'approvePlanRequest',
        400,
        'perDay is required with perMinute',
        () => admin('POST', `/plan-requests/${unknownKey}/approve`, { perMinute: 5 }),
      ],
      [
        'approvePlanRequest',
        400,
        "The enterprise plan needs the consumer's agreed limits (perMinute and perDay).",
        async () => {
          const asked = await admin('POST', '/plan-requests', {
            consumer: 'other',
            requestedPlan: 'enterprise',
            expectedVolume: '10',
          });
          return admin('POST', `/plan-requests/${(asked.body as { id: string }).id}/approve`);
        },
      ],
      ['approvePlanRequest', 400, json, malformed('POST', `/plan-requests/${unknownKey}/approve`)],
      ['approvePlanRequest', 400, object, notObject('POST', `/plan-requests/${unknownKey}/approve`)],
      [
        'declinePlanRequest',
        400,
        'id must be a UUID',
        () => admin('POST', '/plan-requests/not-a-uuid/decline', { note: 'no' }),
      ],
      [
        'declinePlanRequest',
        400,
        'note must not be empty',
        () => admin('POST', `/plan-requests/${unknownKey}/decline`, { note: '' }),
      ],
      [
        'declinePlanRequest',
        400,
        'note must be at most 2000 characters',
        () => admin('POST', `/plan-requests/${unknownKey}/decline`, { note: 'x'.repeat(2001) }),
      ],
      ['declinePlanRequest', 400, json, malformed('POST', `/plan-requests/${unknownKey}/decline`)],
      ['declinePlanRequest', 400, object, notObject('POST', `/plan-requests/${unknownKey}/decline`)],
      ['importConsumers', 400, json, malformed('POST', '/import')],
      ['importConsumers', 400, object, notObject('POST', '/import')],
      ...(['/consumers/acme/usage/history', '/usage/history', '/usage/top', '/usage/export'] as const).flatMap(
        (path): Array<[OperationId, number, string, () => Promise<Reply>]> => {
          const id = (
            {
              '/consumers/acme/usage/history': 'getConsumerUsageHistory',
              '/usage/history': 'getFleetUsageHistory',
              '/usage/top': 'getTopConsumers',
              '/usage/export': 'exportUsage',
            } as const
          )[path];
          return [
            [
              id,
              400,
              'from must be an ISO 8601 date-time with Z or an offset (2026-11-01T00:00:00Z), or a date',
              () => admin('GET', `${path}?from=yesterday`),
            ],
            [
              id,
              400,
              'from must be at the start of an hour (such as 2026-11-01T13:00:00Z) with granularity=hour',
              () =>
                admin(
                  'GET',
                  `${path}?from=2026-11-01T10:30:00Z&to=2026-11-01T12:00:00Z${path === '/usage/export' ? '&granularity=hour' : ''}`,
                ),
            ],
            [
              id,
              400,
              'from must be before to',
              () => admin('GET', `${path}?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z`),
            ],
            [
              id,
              400,
              'A call covers at most 31 days of hours (744 buckets): narrow from and to, or use granularity=day',
              () =>
                admin(
                  'GET',
                  `${path}?from=2026-10-01T00:00:00Z&to=2026-11-01T01:00:00Z${path === '/usage/top' ? '' : '&granularity=hour'}`,
                ),
            ],
          ];
        },
      ),
      [
        'getConsumerUsageHistory',
        400,
        'granularity must be one of hour, day',
        () => admin('GET', '/consumers/acme/usage/history?granularity=week'),
      ],
      ['getConsumerUsageHistory', 400, nameRule, badName('GET', '/usage/history')],
      [
        'getFleetUsageHistory',
        400,
        'granularity must be one of hour, day',
        () => admin('GET', '/usage/history?granularity=week'),
      ],
      [
        'exportUsage',
        400,
        'granularity must be one of hour, day',
        () => admin('GET', '/usage/export?granularity=week'),
      ],
      [
        'getTopConsumers',
        400,
        'by must be one of requests, rateLimited, serverErrors',
        () => admin('GET', '/usage/top?by=ok'),
      ],
      [
        'getTopConsumers',
        400,
        'limit must be an integer between 1 and 100',
        () => admin('GET', '/usage/top?limit=101'),
      ],
      ...webhookBadRequests(),
    ];
    for (const [id, status, message, request] of badRequests) {
      const reply = await request();
      expectErrorBody(reply, status);
      expect([id, withoutIds((reply.body as Example).message)]).toEqual([id, message]);
      sent.push([id, status, (reply.body as Example).code, message]);
      // An answer with details (WEBHOOK_TARGET_REFUSED's reason) is documented with the same details.
      const details = (reply.body as { details?: unknown }).details;
      if (details !== undefined)
        expect([id, examples(id, status).find((e) => e.message === message)]).toEqual([
          id,
          expect.objectContaining({ details }),
        ]);
    }

    // The conflicts: 409, each with a code of its own (issue #35, point 4).
    const soon = new Date(Date.now() + 1_000).toISOString();
    const expiring = ((await admin('POST', '/consumers/acme/keys', { expiresAt: soon })).body as { id: string }).id;
    const pending = (
      (await admin('GET', '/plan-requests?consumer=other&status=pending')).body as { items: Array<{ id: string }> }
    ).items[0].id;
    const decide = async (id: string, how: 'approve' | 'decline') =>
      expect((await admin('POST', `/plan-requests/${id}/${how}`, how === 'decline' ? { note: 'no' } : {})).status).toBe(
        200,
      );
    const conflicts: Array<[OperationId, string, string, () => Promise<Reply>]> = [
      [
        'createConsumer',
        'CONSUMER_EXISTS',
        'A consumer named "acme" already exists.',
        () => admin('POST', '/consumers', { name: 'acme', plan: 'pro' }),
      ],
      [
        'rotateKey',
        'KEY_ALREADY_ROTATED',
        'Key <id> was already rotated: its successor is key <id> (rotate that one instead).',
        () => admin('POST', `/consumers/acme/keys/${rotatedAway}/rotate`, {}),
      ],
      [
        'rotateKey',
        'KEY_REVOKED',
        'Key <id> is revoked: issue a new key instead.',
        () => admin('POST', `/consumers/acme/keys/${revoked}/rotate`, {}),
      ],
      [
        'rotateKey',
        'KEY_EXPIRED',
        'Key <id> has expired: issue a new key instead.',
        async () => {
          while (Date.now() <= Date.parse(soon)) await new Promise((resolve) => setTimeout(resolve, 100));
          return admin('POST', `/consumers/acme/keys/${expiring}/rotate`, {});
        },
      ],
      [
        'importConsumers',
        'KEY_OF_ANOTHER_CONSUMER',
        'Key petk_AbCd… of "acme" belongs to another consumer.',
        () =>
          admin('POST', '/import', {
            consumers: [{ name: 'acme', plan: 'free', keys: [{ keyHash: hashElsewhere, keyHint: 'petk_AbCd…' }] }],
          }),
      ],
      [
        'createClientBinding',
        'CLIENT_ALREADY_BOUND',
        `Client "${EXAMPLE_CLIENT_ID}" of ${EXAMPLE_ISSUER} is bound to a consumer already: unbind it there first.`,
        async () => {
          const bind = (name: string) =>
            admin('POST', `/consumers/${name}/client-bindings`, {
              issuer: EXAMPLE_ISSUER,
              clientId: EXAMPLE_CLIENT_ID,
            });
          expect((await bind('other')).status).toBe(201);
          return bind('acme');
        },
      ],
      [
        'createPlanRequest',
        'PLAN_UNCHANGED',
        "requestedPlan must differ from the consumer's current plan (free).",
        () => admin('POST', '/plan-requests', { consumer: 'acme', requestedPlan: 'free', expectedVolume: '10' }),
      ],
      [
        'createPlanRequest',
        'PLAN_REQUEST_PENDING',
        'Consumer "acme" already has a pending plan request.',
        async () => {
          expect(
            (await admin('POST', '/plan-requests', { consumer: 'acme', requestedPlan: 'pro', expectedVolume: '10' }))
              .status,
          ).toBe(201);
          return admin('POST', '/plan-requests', { consumer: 'acme', requestedPlan: 'business', expectedVolume: '10' });
        },
      ],
      [
        'approvePlanRequest',
        'PLAN_REQUEST_DECIDED',
        'Plan request <id> was already declined.',
        async () => {
          await decide(pending, 'decline');
          return admin('POST', `/plan-requests/${pending}/approve`);
        },
      ],
      [
        'declinePlanRequest',
        'PLAN_REQUEST_DECIDED',
        'Plan request <id> was already declined.',
        () => admin('POST', `/plan-requests/${pending}/decline`, { note: 'no' }),
      ],
      [
        'approvePlanRequest',
        'PLAN_REQUEST_DECIDED',
        'Plan request <id> was already approved.',
        async () => {
          const asked = (
            (await admin('POST', '/plan-requests', { consumer: 'other', requestedPlan: 'pro', expectedVolume: '10' }))
              .body as { id: string }
          ).id;
          await decide(asked, 'approve');
          return admin('POST', `/plan-requests/${asked}/approve`);
        },
      ],
      [
        'approvePlanRequest',
        'PLAN_REQUEST_STALE',
        'Plan request <id> asked to move from free, but the consumer is on business now: decline it, or ask again.',
        async () => {
          const stale = 'stale-ask';
          expect((await admin('POST', '/consumers', { name: stale, plan: 'free' })).status).toBe(201);
          const asked = (
            (await admin('POST', '/plan-requests', { consumer: stale, requestedPlan: 'pro', expectedVolume: '10' }))
              .body as { id: string }
          ).id;
          expect((await admin('PATCH', `/consumers/${stale}`, { plan: 'business' })).status).toBe(200);
          const reply = await admin('POST', `/plan-requests/${asked}/approve`);
          // Nothing changed: still on business, the request still pending.
          expect((await admin('GET', `/consumers/${stale}`)).body).toMatchObject({ plan: 'business' });
          expect((await admin('GET', `/plan-requests?consumer=${stale}&status=pending`)).body).toMatchObject({
            items: [{ id: asked }],
          });
          return reply;
        },
      ],
      [
        'declinePlanRequest',
        'PLAN_REQUEST_DECIDED',
        'Plan request <id> was already approved.',
        async () => {
          const approved = (
            (await admin('GET', '/plan-requests?consumer=other&status=approved')).body as {
              items: Array<{ id: string }>;
            }
          ).items[0].id;
          return admin('POST', `/plan-requests/${approved}/decline`, { note: 'no' });
        },
      ],
      // Last: they fill acme up to the cap on active keys.
      [
        'issueKey',
        'KEY_LIMIT_REACHED',
        'A consumer holds at most 100 active keys (CONSUMER_MAX_KEYS): "acme" has 100; revoke some first.',
        async () => {
          let reply = await admin('POST', '/consumers/acme/keys', {});
          while (reply.status === 201) reply = await admin('POST', '/consumers/acme/keys', {});
          return reply;
        },
      ],
      [
        'rotateKey',
        'KEY_LIMIT_REACHED',
        'A consumer holds at most 100 active keys (CONSUMER_MAX_KEYS): "acme" has 100; revoke some first.',
        async () => {
          const keys = (
            (await admin('GET', '/consumers/acme')).body as {
              keys: Array<{ id: string; state: string; replacedBy: string | null }>;
            }
          ).keys;
          const active = keys.find((k) => k.state === 'active' && k.replacedBy === null)!;
          return admin('POST', `/consumers/acme/keys/${active.id}/rotate`, { overlapSeconds: 60 });
        },
      ],
      // An import counts the keys it would leave (the rotation and the issue, those already there).
      [
        'importConsumers',
        'KEY_LIMIT_REACHED',
        'A consumer holds at most 100 active keys (CONSUMER_MAX_KEYS): "acme" has 101; revoke some first.',
        () =>
          admin('POST', '/import', {
            consumers: [{ name: 'acme', plan: 'free', keys: [{ keyHash: hashApiKey(generateApiKey()) }] }],
          }),
      ],
      [
        'createWebhookEndpoint',
        'WEBHOOK_ENDPOINT_LIMIT',
        'Consumer "acme" has 10 webhook endpoints, the most allowed (WEBHOOK_MAX_ENDPOINTS 10): remove one first.',
        async () => {
          let reply = await admin('POST', hooks, { url: HOOK_URL });
          while (reply.status === 201) reply = await admin('POST', hooks, { url: HOOK_URL });
          return reply;
        },
      ],
      [
        'createFleetWebhookEndpoint',
        'WEBHOOK_ENDPOINT_LIMIT',
        'The fleet has 10 webhook endpoints, the most allowed (WEBHOOK_MAX_ENDPOINTS 10): remove one first.',
        async () => {
          let reply = await admin('POST', '/webhook-endpoints', { url: HOOK_URL });
          while (reply.status === 201) reply = await admin('POST', '/webhook-endpoints', { url: HOOK_URL });
          return reply;
        },
      ],
    ];
    for (const [id, code, message, request] of conflicts) {
      const reply = await request();
      expectErrorBody(reply, 409, code);
      expect([id, withoutIds((reply.body as Example).message)]).toEqual([id, message]);
      sent.push([id, 409, code, message]);
    }

    // Every documented 400, 404 and 409 example (its code and message) was sent above, and nothing else was.
    const documented = OPERATIONS.flatMap(([, , id]) =>
      [400, 404, 409].flatMap((status) => examples(id, status).map((e) => [id, status, e.code, withoutIds(e.message)])),
    );
    expect(documented.sort()).toEqual([...sent].sort());
  });

  it('is the document committed as gateway/admin-openapi.json, but for the relative server', () => {
    const committed = JSON.parse(
      readFileSync(join(__dirname, '../../../gateway/admin-openapi.json'), 'utf8'),
    ) as Document;
    expect(committed.servers!.map((s) => s.url)).toEqual(['http://127.0.0.1:3002']);
    expect({ ...committed, servers: undefined }).toEqual({ ...doc, servers: undefined });
  });
});
