import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AdminApiError, AdminClient } from './admin-client';

describe('AdminClient', () => {
  let server: Server;
  let baseUrl: string;
  const seen: {
    method?: string;
    url?: string;
    authorization?: string;
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
          body,
          onBehalfOf: request.headers['x-on-behalf-of'],
          endUserAddress: request.headers['x-end-user-address'],
        });
        if (request.url?.startsWith('/ok'))
          return response.writeHead(200, { 'content-type': 'application/json' }).end('{"name":"acme"}');
        if (request.url === '/forbidden')
          return response
            .writeHead(403, { 'content-type': 'application/json' })
            .end('{"code":"FORBIDDEN","message":"Token \\"ro\\" lacks the scope consumers:write.","status":403}');
        if (request.url === '/html')
          return response.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>');
        if (request.url === '/slow') return setTimeout(() => response.end('{}'), 400);
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sends the token given per call, the query and a JSON body', async () => {
    const client = new AdminClient({ baseUrl: `${baseUrl}/` });
    await expect(
      client.get(`tok-1`, '/ok', { prefix: 'ac', empty: '', skipped: undefined, scopes: ['a', 'b'] }),
    ).resolves.toEqual({ name: 'acme' });
    await client.patch('tok-2', '/ok/x', { plan: 'pro' });
    expect(seen[0]).toMatchObject({
      method: 'GET',
      url: '/ok?prefix=ac&scopes=a&scopes=b',
      authorization: 'Bearer tok-1',
    });
    expect(seen[1]).toMatchObject({
      method: 'PATCH',
      url: '/ok/x',
      authorization: 'Bearer tok-2',
      body: '{"plan":"pro"}',
    });
    await expect(client.post('t', '/empty')).resolves.toBeUndefined();
  });

  it('names the end user behind a call only when asked (X-On-Behalf-Of, X-End-User-Address), as printable ASCII', async () => {
    const client = new AdminClient({ baseUrl });
    seen.length = 0;
    await client.post('t', '/ok/keys', undefined, { onBehalfOf: 'account:42 zoë@example.com', endUserAddress: '::1' });
    await client.get('t', '/ok', undefined, { onBehalfOf: 'operator:alice' });
    await client.get('t', '/ok');
    expect(seen.map((s) => [s.onBehalfOf, s.endUserAddress])).toEqual([
      ['account:42 zo%C3%AB@example.com', '::1'],
      ['operator:alice', undefined],
      [undefined, undefined],
    ]);
  });

  it('maps the admin Error body to a typed error', async () => {
    const error = await new AdminClient({ baseUrl }).get('t', '/forbidden').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AdminApiError);
    expect(error).toMatchObject({
      status: 403,
      code: 'FORBIDDEN',
      message: 'Token "ro" lacks the scope consumers:write.',
    });
  });

  it('never sends an address with a dot segment: an id of ".." is refused, not resolved to the consumer itself', async () => {
    const before = seen.length;
    for (const id of ['..', '.', '%2E%2E', encodeURIComponent('..')]) {
      await expect(
        new AdminClient({ baseUrl }).post('t', `/ok/consumers/acme/keys/${id}/revoke`),
      ).rejects.toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    }
    expect(seen.length).toBe(before);
    await expect(
      new AdminClient({ baseUrl }).post('t', `/ok/consumers/acme/keys/${encodeURIComponent('a.b..c')}/revoke`),
    ).resolves.toEqual({ name: 'acme' });
  });

  it('maps a body that is not the Error contract, a timeout and an unreachable API', async () => {
    await expect(new AdminClient({ baseUrl }).get('t', '/html')).rejects.toMatchObject({
      status: 502,
      code: 'ADMIN_ERROR',
    });
    await expect(new AdminClient({ baseUrl, timeoutMs: 100 }).get('t', '/slow')).rejects.toMatchObject({
      status: 504,
      code: 'ADMIN_TIMEOUT',
    });
    await expect(new AdminClient({ baseUrl: 'http://127.0.0.1:1' }).get('t', '/ok')).rejects.toMatchObject({
      status: 503,
      code: 'ADMIN_UNREACHABLE',
    });
  });
});
