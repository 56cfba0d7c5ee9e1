import { createServer, Server } from 'node:http';
import { Logger } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import { AdminApiError } from './admin-api-error';
import { AdminApi } from './typed-admin-client';

describe('AdminApi (the typed admin client)', () => {
  let server: Server;
  let baseUrl: string;
  const seen: {
    method?: string;
    url?: string;
    authorization?: string;
    accept?: string;
    contentType?: string;
    body?: string;
    onBehalfOf?: string | string[];
    endUserAddress?: string | string[];
  }[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        seen.push({
          method: request.method,
          url: request.url,
          authorization: request.headers.authorization,
          accept: request.headers.accept,
          contentType: request.headers['content-type'],
          body,
          onBehalfOf: request.headers['x-on-behalf-of'],
          endUserAddress: request.headers['x-end-user-address'],
        });
        const json = (status: number, text: string) =>
          response.writeHead(status, { 'content-type': 'application/json' }).end(text);
        if (request.url?.startsWith('/consumers/forbidden'))
          return json(
            403,
            '{"code":"FORBIDDEN","message":"Token \\"ro\\" lacks the scope consumers:write.","status":403}',
          );
        if (request.url?.startsWith('/consumers/taken'))
          return json(
            409,
            '{"code":"CONSUMER_EXISTS","message":"A consumer named taken already exists.","status":409}',
          );
        if (request.url?.startsWith('/consumers/html'))
          return response.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>');
        if (request.url?.startsWith('/consumers/slow')) return setTimeout(() => json(200, '{}'), 400);
        if (request.url?.startsWith('/consumers?')) return json(200, '{"consumers":[],"next":null}');
        json(200, '{"name":"acme"}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  beforeEach(() => (seen.length = 0));

  it('sends the token given per caller, the path and query parameters and a JSON body, and resolves to the 2xx body', async () => {
    const admin = new AdminApi({ baseUrl: `${baseUrl}/` });
    const page = await admin
      .as('tok-1')
      .GET('/consumers', { params: { query: { prefix: 'ac', email: '', limit: 5 } } });
    expect(page).toEqual({ consumers: [], next: null });
    const updated = await admin
      .as('tok-2')
      .PATCH('/consumers/{name}', { params: { path: { name: 'acme corp' } }, body: { plan: 'pro' } });
    expect(updated.name).toBe('acme');
    expect(seen[0]).toMatchObject({
      method: 'GET',
      url: '/consumers?prefix=ac&limit=5',
      authorization: 'Bearer tok-1',
      accept: 'application/json',
      body: '',
    });
    expect(seen[0].contentType).toBeUndefined();
    expect(seen[1]).toMatchObject({
      method: 'PATCH',
      url: '/consumers/acme%20corp',
      authorization: 'Bearer tok-2',
      contentType: 'application/json',
      body: '{"plan":"pro"}',
    });
  });

  it("sends a PUT with its JSON body (a consumer's credit balance set)", async () => {
    const admin = new AdminApi({ baseUrl });
    await admin
      .as('tok-3', { onBehalfOf: 'operator:alice' })
      .PUT('/consumers/{name}/credits', { params: { path: { name: 'acme' } }, body: { balance: 500, reason: 'r' } });
    expect(seen).toEqual([
      expect.objectContaining({
        method: 'PUT',
        url: '/consumers/acme/credits',
        authorization: 'Bearer tok-3',
        contentType: 'application/json',
        body: '{"balance":500,"reason":"r"}',
        onBehalfOf: 'operator:alice',
      }),
    ]);
  });

  it('names the end user behind a call only when asked (X-On-Behalf-Of, X-End-User-Address), as printable ASCII', async () => {
    const admin = new AdminApi({ baseUrl });
    await admin
      .as('t', { onBehalfOf: 'account:42 zoë@example.com', endUserAddress: '::1' })
      .POST('/consumers/{name}/keys', { params: { path: { name: 'acme' } } });
    await admin.as('t', { onBehalfOf: 'operator:alice' }).GET('/token');
    await admin.as('t').GET('/token');
    expect(seen.map((s) => [s.onBehalfOf, s.endUserAddress])).toEqual([
      ['account:42 zo%C3%AB@example.com', '::1'],
      ['operator:alice', undefined],
      [undefined, undefined],
    ]);
  });

  it('throws the admin Error body as an AdminApiError, with its status and code (a 409 conflict included)', async () => {
    const calls = new AdminApi({ baseUrl }).as('t');
    const forbidden = await calls
      .POST('/consumers/{name}/disable', { params: { path: { name: 'forbidden' } } })
      .catch((e: unknown) => e);
    expect(forbidden).toBeInstanceOf(AdminApiError);
    expect(forbidden).toMatchObject({
      status: 403,
      code: 'FORBIDDEN',
      message: 'Token "ro" lacks the scope consumers:write.',
    });
    await expect(calls.GET('/consumers/{name}', { params: { path: { name: 'taken' } } })).rejects.toMatchObject({
      status: 409,
      code: 'CONSUMER_EXISTS',
    });
  });

  it('never sends an address with a dot segment: an id of ".." is refused, not resolved to the consumer itself', async () => {
    const calls = new AdminApi({ baseUrl }).as('t');
    for (const keyId of ['..', '.', '%2E%2E', '%2e.']) {
      const refused = await calls
        .POST('/consumers/{name}/keys/{keyId}/revoke', { params: { path: { name: 'acme', keyId } } })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(AdminApiError);
      expect(refused).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    }
    await expect(
      calls.POST('/consumers/{name}/keys/{keyId}/rotate', { params: { path: { name: '..', keyId: 'k1' } } }),
    ).rejects.toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    expect(seen).toEqual([]);
    await expect(
      calls.POST('/consumers/{name}/keys/{keyId}/revoke', { params: { path: { name: 'acme', keyId: 'a.b..c' } } }),
    ).resolves.toEqual({ name: 'acme' });
    expect(seen.map((s) => s.url)).toEqual(['/consumers/acme/keys/a.b..c/revoke']);
  });

  it('never sends a token a header cannot carry (a pasted line break): refused as a wrong token, nothing logged', async () => {
    const warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      for (const token of ['adm_first-half\nadm_second-half', 'adm_a\rb', 'adm_a b', 'adm_a\u0000b', 'adm_ü']) {
        const refused = await new AdminApi({ baseUrl })
          .as(token)
          .GET('/token')
          .catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(AdminApiError);
        expect(refused).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
        expect((refused as Error).message).not.toContain('half');
      }
      expect(seen).toEqual([]);
      expect(warnings).not.toHaveBeenCalled();
      // An unreachable API is logged by its error's kind, never by fetch's message (which quotes headers).
      await new AdminApi({ baseUrl: 'http://127.0.0.1:1' })
        .as('adm_secret-token')
        .GET('/token')
        .catch(() => undefined);
      expect(warnings.mock.calls.flat().join(' ')).toMatch(/cannot be reached: TypeError/);
      expect(warnings.mock.calls.flat().join(' ')).not.toContain('adm_secret-token');
    } finally {
      warnings.mockRestore();
    }
  });

  it('maps a body that is not the Error contract, a timeout and an unreachable API', async () => {
    const get = (admin: AdminApi, name: string) =>
      admin.as('t').GET('/consumers/{name}', { params: { path: { name } } });
    await expect(get(new AdminApi({ baseUrl }), 'html')).rejects.toMatchObject({ status: 502, code: 'ADMIN_ERROR' });
    await expect(get(new AdminApi({ baseUrl, timeoutMs: 100 }), 'slow')).rejects.toMatchObject({
      status: 504,
      code: 'ADMIN_TIMEOUT',
    });
    const unreachable = await get(new AdminApi({ baseUrl: 'http://127.0.0.1:1' }), 'acme').catch((e: unknown) => e);
    expect(unreachable).toBeInstanceOf(AdminApiError);
    expect(unreachable).toMatchObject({ status: 503, code: 'ADMIN_UNREACHABLE' });
    // The message may reach a public page: it never names the internal address (issue #36.7).
    expect((unreachable as Error).message).not.toContain('127.0.0.1');
  });

  it('makes a path the API does not have, a missing parameter or a body of the wrong shape a compile error', () => {
    const calls = new AdminApi({ baseUrl }).as('t');
    // Never called: the checks are the compiler's (`npm run typecheck` fails when one of these lines compiles).
    const unsent = () => [
      // @ts-expect-error no such path
      calls.GET('/consumer/{name}', { params: { path: { name: 'acme' } } }),
      // @ts-expect-error the path parameter is required
      calls.GET('/consumers/{name}'),
      // @ts-expect-error not a plan
      calls.PATCH('/consumers/{name}', { params: { path: { name: 'acme' } }, body: { plan: 'gold' } }),
      // @ts-expect-error GET has no body and /token no POST
      calls.POST('/token', { body: {} }),
      // @ts-expect-error /consumers/{name} has no PUT
      calls.PUT('/consumers/{name}', { params: { path: { name: 'acme' } }, body: {} }),
      calls.PUT('/consumers/{name}/credits', {
        params: { path: { name: 'acme' } },
        // @ts-expect-error a balance is a number (or null)
        body: { balance: '5', reason: 'r' },
      }),
    ];
    expect(typeof unsent).toBe('function');
  });
});
