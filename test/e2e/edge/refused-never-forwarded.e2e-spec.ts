import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { ApiKeyAuthenticator } from '../../../apps/gateway/src/auth/api-key-authenticator';
import { GatewayUnderTest, mintKey, startGateway } from '../../support/gateway';
import { openSocket, rawRequest } from '../../support/raw-http';

/** What the recording upstream received: one entry per request that reached it, with its whole body. */
interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * An HTTP server standing in for the pets service (PETS_URL): it records every request that reaches it and
 * answers 201 with a Pet, as the pets service would to a valid POST.
 */
async function startRecordingUpstream(): Promise<{ url: string; requests: Recorded[]; close(): Promise<void> }> {
  const requests: Recorded[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('latin1'),
      });
      const body = JSON.stringify({ id: requests.length, name: 'Rex', categoryId: 1 });
      response.writeHead(request.method === 'POST' ? 201 : 200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
      });
      response.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Issue #21 (5): a request the HTTP parser refused (broken chunked framing: 400 MALFORMED_REQUEST) must never
 * reach the pets service, not even as a POST with an empty body. Each broken framing is sent on the fast path
 * (`/v1/pets`) and with a trailing slash (`/v1/pets/`), over a raw socket, to a
 * gateway whose PETS_URL is a server of the test's own that records every request.
 */
describe('a request refused before forwarding never reaches the pets service', () => {
  let upstream: Awaited<ReturnType<typeof startRecordingUpstream>>;
  let gateway: GatewayUnderTest;
  let key: string;
  let host: string;

  beforeAll(async () => {
    upstream = await startRecordingUpstream();
    gateway = await startGateway({ petsUrl: upstream.url });
    key = await mintKey(gateway, 'enterprise', 'framing', { perMinute: 100_000, perDay: 1_000_000 });
    host = new URL(gateway.url).host;
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  /**
   * Runs `send` with authentication taking `delayMs` longer (as behind a slow rate-limit store): then the parser's
   * refusal of the body, or the client's leaving, always comes before the gateway reads the body.
   */
  async function admittedAfter(delayMs: number, send: () => Promise<void>): Promise<void> {
    if (delayMs === 0) return send();
    const authenticate = ApiKeyAuthenticator.prototype.authenticate;
    const late = jest.spyOn(ApiKeyAuthenticator.prototype, 'authenticate').mockImplementation(async function (
      this: ApiKeyAuthenticator,
      header,
    ) {
      await sleep(delayMs);
      return authenticate.call(this, header);
    });
    try {
      await send();
      expect(late).toHaveBeenCalledTimes(1);
    } finally {
      late.mockRestore();
    }
  }

  const head = (path: string, framing: string) =>
    `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n${framing}\r\n`;

  /** Broken framings: the headers that announce the body, and the bytes that follow them. */
  const broken: Array<[string, string, string]> = [
    ['Transfer-Encoding: xchunked', 'Transfer-Encoding: xchunked\r\n', '{"name":"Rex","categoryId":1}'],
    [
      'an overflowing chunk size',
      'Transfer-Encoding: chunked\r\n',
      'ffffffffffffffffffff\r\n{"name":"Rex","categoryId":1}\r\n0\r\n\r\n',
    ],
    ['a chunk without its CRLF', 'Transfer-Encoding: chunked\r\n', '1e\r\n{"name":"Rex","categoryId":1}XX0\r\n\r\n'],
    [
      'a bad chunk-size character',
      'Transfer-Encoding: chunked\r\n',
      'zz\r\n{"name":"Rex","categoryId":1}\r\n0\r\n\r\n',
    ],
    [
      'a chunk size with a bad character after valid digits',
      'Transfer-Encoding: chunked\r\n',
      '1g\r\n{"name":"Rex","categoryId":1}\r\n0\r\n\r\n',
    ],
  ];

  for (const [path, via] of [
    ['/v1/pets', 'the plain path'],
    ['/v1/pets/', 'a trailing slash'],
  ] as const) {
    describe(via, () => {
      it('forwards a well-formed chunked POST (the recording upstream sees it), also when admitted late', async () => {
        for (const delayMs of [0, 300]) {
          await admittedAfter(delayMs, async () => {
            const before = upstream.requests.length;
            const body = '{"name":"Rex","categoryId":1}';
            const reply = await rawRequest(
              gateway.url,
              `${head(path, 'Transfer-Encoding: chunked\r\nConnection: close\r\n')}${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
            );
            expect(reply.status).toBe(201);
            expect(upstream.requests.slice(before)).toEqual([
              expect.objectContaining({ method: 'POST', url: path.slice('/v1'.length), body }),
            ]);
          });
        }
      });

      for (const [name, framing, bytes] of broken) {
        for (const [admission, delayMs] of [
          ['', 0],
          [', admitted late (a slow Redis)', 300],
        ] as const) {
          it(`answers ${name} with 400 MALFORMED_REQUEST and forwards nothing${admission}`, async () => {
            await admittedAfter(delayMs, async () => {
              const before = upstream.requests.length;
              const reply = await rawRequest(gateway.url, head(path, framing) + bytes);
              expect(reply.status).toBe(400);
              expect(reply.json).toEqual({ code: 'MALFORMED_REQUEST', message: expect.any(String), status: 400 });
              expect(reply.closed).toBe(true);
              // Whatever the gateway would still send upstream is under way by then.
              await sleep(delayMs + 300);
              expect(upstream.requests.slice(before)).toEqual([]);
            });
          });
        }
      }

      it('forwards nothing for a client that left while its request was being admitted', async () => {
        // The client sends its whole POST and closes its side while admission waits: Node aborts the request and
        // closes the connection unanswered, before the gateway reads the body. Forwarding it would send the pets
        // service a POST with an empty body that nobody will get the answer to.
        await admittedAfter(300, async () => {
          const before = upstream.requests.length;
          const body = '{"name":"Rex","categoryId":1}';
          const socket = await openSocket(gateway.url);
          const closed = new Promise((resolve) => socket.once('close', resolve));
          socket.end(`${head(path, `Content-Length: ${body.length}\r\n`)}${body}`);
          await closed;
          await sleep(600);
          expect(upstream.requests.slice(before)).toEqual([]);
        });
      });
    });
  }
});
