import { gzipSync } from 'node:zlib';
import { mintKey } from '../../support/gateway';
import { call } from '../../support/http';
import { RawReply, openSocket, rawRequest, readReply } from '../../support/raw-http';
import { withStack } from '../../support/with-stack';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function expectRawError(reply: RawReply, status: number, code: string): void {
  expect(reply.status).toBe(status);
  expect(reply.headers['content-type']).toMatch(/^application\/json/);
  expect(reply.json).toEqual({ code, message: expect.any(String), status });
}

/**
 * What the HTTP layer does with requests a client, a proxy or an attacker may send: every answer is the Error
 * body, never an empty 431, Node's bare 400, a 500 with a zlib stack, or a 502.
 */
describe('the edge, at the protocol level', () => {
  const stack = withStack({
    pets: {},
    gateway: { env: { HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '1500', KEEP_ALIVE_TIMEOUT_MS: '5000' } },
  });

  let key: string;
  let host: string;

  beforeAll(async () => {
    key = await mintKey(stack.gateway, 'enterprise', 'edge', { perMinute: 100_000, perDay: 1_000_000 });
    host = new URL(stack.gateway.url).host;
  });

  const post = (body: Buffer | string, headers: Record<string, string>) =>
    rawRequest(
      stack.gateway.url,
      Buffer.concat([
        Buffer.from(
          `POST /v1/pets HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
            Object.entries(headers)
              .map(([name, value]) => `${name}: ${value}\r\n`)
              .join('') +
            `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`,
        ),
        Buffer.from(body),
      ]),
    );

  describe('errors of the HTTP parser', () => {
    it('answers a 64 KB query string with 431 HEADERS_TOO_LARGE and the Error body, then closes', async () => {
      const reply = await rawRequest(
        stack.gateway.url,
        `GET /v1/pets?x=${'a'.repeat(64 * 1024)} HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
      );
      expectRawError(reply, 431, 'HEADERS_TOO_LARGE');
      expect(reply.closed).toBe(true);
    });

    it('answers broken chunked framing with 400 MALFORMED_REQUEST and the Error body', async () => {
      const reply = await rawRequest(
        stack.gateway.url,
        `POST /v1/pets HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
          'Transfer-Encoding: chunked\r\n\r\nzz\r\n{"name":"Rex"}\r\n0\r\n\r\n',
      );
      expectRawError(reply, 400, 'MALFORMED_REQUEST');
      expect(reply.closed).toBe(true);
    });

    it('answers a request whose headers never end with 408 REQUEST_TIMEOUT', async () => {
      const socket = await openSocket(stack.gateway.url);
      const reply = readReply(socket, 10_000);
      socket.write(`GET /v1/pets HTTP/1.1\r\nHost: ${host}\r\n`);
      expectRawError(await reply, 408, 'REQUEST_TIMEOUT');
      socket.destroy();
    });

    it('answers a body that stops arriving with 408 REQUEST_TIMEOUT, not minutes later', async () => {
      const socket = await openSocket(stack.gateway.url);
      const reply = readReply(socket, 10_000);
      socket.write(
        `POST /v1/pets HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
          'Content-Length: 40\r\n\r\n{"name":',
      );
      expectRawError(await reply, 408, 'REQUEST_TIMEOUT');
      socket.destroy();
    });

    it('keeps an idle keep-alive connection open longer than the headers timeout', async () => {
      const socket = await openSocket(stack.gateway.url);
      const request = `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\n\r\n`;
      let reply = readReply(socket);
      socket.write(request);
      expect((await reply).status).toBe(200);
      await sleep(2500);
      reply = readReply(socket);
      socket.write(request);
      expect((await reply).status).toBe(200);
      socket.destroy();
    });
  });

  describe('bodies', () => {
    it('refuses Content-Encoding: gzip on a body that is not compressed with 400, not 500', async () => {
      expectRawError(
        await post('{"name":"Rex","categoryId":1}', { 'Content-Encoding': 'gzip' }),
        400,
        'MALFORMED_REQUEST',
      );
      expectRawError(
        await post('{"name":"Rex","categoryId":1}', { 'Content-Encoding': 'br' }),
        400,
        'MALFORMED_REQUEST',
      );
    });

    it('accepts a body that is really gzip-compressed', async () => {
      const reply = await post(gzipSync('{"name":"Zipped","categoryId":1}'), { 'Content-Encoding': 'gzip' });
      expect(reply.status).toBe(201);
      expect(reply.json).toMatchObject({ name: 'Zipped', categoryId: 1 });
    });

    it('refuses invalid UTF-8 in a JSON body rather than storing U+FFFD', async () => {
      const body = Buffer.concat([
        Buffer.from('{"name":"R'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('x","categoryId":1}'),
      ]);
      const reply = await post(body, {});
      expectRawError(reply, 400, 'MALFORMED_JSON');
      expect((reply.json as { message: string }).message).toBe('The request body is not valid UTF-8.');
      const list = await call(`${stack.pets.url}/pets?limit=100`);
      expect(JSON.stringify(list.body)).not.toContain('\ufffd');
    });

    it('answers a declared Content-Length above the limit with 413 at once, without waiting for the body', async () => {
      const socket = await openSocket(stack.gateway.url);
      const reply = readReply(socket, 3000);
      socket.write(
        `POST /v1/pets HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
          'Content-Length: 10000000\r\n\r\n',
      );
      const answer = await reply;
      expectRawError(answer, 413, 'PAYLOAD_TOO_LARGE');
      expect(answer.closed).toBe(true);
      socket.destroy();
    });

    it('answers a chunked body that grows past the limit with 413 as soon as it does, with the rate-limit headers, and forwards nothing', async () => {
      const before = await call(`${stack.pets.url}/pets?limit=100`);
      const socket = await openSocket(stack.gateway.url);
      const reply = readReply(socket, 3000);
      socket.write(
        `POST /v1/pets HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
          'Transfer-Encoding: chunked\r\n\r\n',
      );
      // 17 KiB of a JSON string in chunks of 1 KiB, and no last chunk: only an answer that does not wait can arrive.
      socket.write(`1\r\n"\r\n`);
      for (let i = 0; i < 17; i += 1) socket.write(`400\r\n${'a'.repeat(1024)}\r\n`);
      const answer = await reply;
      expectRawError(answer, 413, 'PAYLOAD_TOO_LARGE');
      expect(answer.headers['x-ratelimit-limit']).toBe('100000');
      expect(answer.closed).toBe(true);
      socket.destroy();
      const after = await call(`${stack.pets.url}/pets?limit=100`);
      expect(after.body).toEqual(before.body);
    });

    it('does the same on the pets service itself', async () => {
      const socket = await openSocket(stack.pets.url);
      const reply = readReply(socket, 3000);
      socket.write(
        'POST /pets HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n',
      );
      expectRawError(await reply, 413, 'PAYLOAD_TOO_LARGE');
      socket.destroy();
    });
  });

  it('forwards a request line in absolute form by its path (RFC 9112 3.2.2), not a slice of the line', async () => {
    const reply = await rawRequest(
      stack.gateway.url,
      `GET http://${host}/v1/pets?limit=1 HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`,
    );
    expect(reply.status).toBe(200);
    expect(Array.isArray(reply.json)).toBe(true);
  });
});
