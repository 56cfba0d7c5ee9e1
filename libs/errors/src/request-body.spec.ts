import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { ApiError } from './api-error';
import { toErrorResponse } from './http-error-mapping';
import { readRequestBody } from './request-body';

const LIMIT = 1024;

/** A real HTTP server whose handler reads the body and reports what came of it, then answers like the gateway. */
interface Outcome {
  body?: Buffer;
  error?: unknown;
}

function serve(onRequest?: (request: IncomingMessage) => Promise<void> | void): {
  server: Server;
  outcomes: Array<Promise<Outcome>>;
} {
  const outcomes: Array<Promise<Outcome>> = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const outcome = (async (): Promise<Outcome> => {
      await onRequest?.(request);
      return readRequestBody(request, LIMIT).then(
        (body): Outcome => ({ body }),
        (error: unknown): Outcome => ({ error }),
      );
    })();
    outcomes.push(outcome);
    void outcome.then(({ body, error }) => {
      if (response.destroyed) return;
      if (error) {
        const answer = toErrorResponse(error);
        response.writeHead(answer.body.status, { 'content-type': 'application/json', ...answer.headers });
        response.end(JSON.stringify(answer.body));
      } else {
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        response.end(body ?? Buffer.alloc(0));
      }
    });
  });
  return { server, outcomes };
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function send(
  port: number,
  body: Buffer | undefined,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { port, host: '127.0.0.1', method: body ? 'POST' : 'GET', path: '/', headers },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

describe('readRequestBody (a real HTTP server)', () => {
  let server: Server;
  let outcomes: Array<Promise<Outcome>>;
  let port: number;

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  describe('plain bodies', () => {
    beforeEach(async () => {
      ({ server, outcomes } = serve());
      port = await listen(server);
    });

    it('returns the bytes as sent, with Content-Length and chunked in several writes', async () => {
      const bytes = Buffer.from([0x7b, 0xff, 0x00, 0xc3, 0x28, 0x7d]); // not UTF-8 on purpose: bytes, not text
      const declared = await send(port, bytes, { 'content-length': String(bytes.length) });
      expect(declared.status).toBe(200);
      expect(declared.body.equals(bytes)).toBe(true);

      const answer = await new Promise<Buffer>((resolve, reject) => {
        const request = httpRequest({ port, host: '127.0.0.1', method: 'POST', path: '/' }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve(Buffer.concat(chunks)));
        });
        request.on('error', reject);
        request.write('{"name":');
        setTimeout(() => request.end('"Rex"}'), 20);
      });
      expect(answer.toString()).toBe('{"name":"Rex"}');
    });

    it('resolves undefined for a request without a body, and for Content-Length: 0', async () => {
      await send(port, undefined);
      await send(port, Buffer.alloc(0), { 'content-length': '0' });
      const results = await Promise.all(outcomes);
      expect(results).toEqual([{ body: undefined }, { body: undefined }]);
    });

    it('takes a body of exactly the limit and refuses one byte more with 413 and Connection: close', async () => {
      const exact = await send(port, Buffer.alloc(LIMIT, 0x61));
      expect(exact.status).toBe(200);
      expect(exact.body.length).toBe(LIMIT);
      // Chunked, so that nothing declares the size up front.
      const over = await new Promise<{ status: number; connection?: string; body: string }>((resolve, reject) => {
        const request = httpRequest({ port, host: '127.0.0.1', method: 'POST', path: '/' }, (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString()));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, connection: response.headers.connection, body: text }),
          );
        });
        request.on('error', reject);
        request.end(Buffer.alloc(LIMIT + 1, 0x61));
      });
      expect(over.status).toBe(413);
      expect(over.connection).toBe('close');
      expect(JSON.parse(over.body)).toEqual({
        code: 'PAYLOAD_TOO_LARGE',
        message: `The request body exceeds the limit of ${LIMIT} bytes.`,
        status: 413,
      });
    });

    it('answers 413 as soon as the limit is passed, without waiting for the rest of an endless body', async () => {
      const socket = connect(port, '127.0.0.1');
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      socket.write('POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
      const chunk = Buffer.alloc(512, 0x61);
      // Three chunks pass the limit; the body never ends (no last chunk), so only an early answer can arrive.
      for (let i = 0; i < 3; i += 1) socket.write(`${chunk.length.toString(16)}\r\n${chunk.toString()}\r\n`);
      await closed;
      expect(received).toMatch(/^HTTP\/1\.1 413 /);
      expect(received).toMatch(/\r\nConnection: close\r\n/i);
    });

    it('rejects (400, never hangs) when the client goes away in the middle of the body', async () => {
      const socket = connect(port, '127.0.0.1');
      socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"name":');
      await new Promise((resolve) => setTimeout(resolve, 50));
      socket.destroy();
      const [result] = await Promise.all(outcomes);
      expect(result.error).toBeInstanceOf(ApiError);
      expect((result.error as ApiError).body).toMatchObject({ status: 400, code: 'MALFORMED_REQUEST' });
    });
  });

  it('refuses a request whose body was read by someone else rather than taking it for empty', async () => {
    ({ server, outcomes } = serve(
      (request) =>
        new Promise<void>((resolve) => {
          request.resume();
          request.on('end', resolve);
        }),
    ));
    port = await listen(server);
    await send(port, Buffer.from('{"a":1}'));
    const [result] = await Promise.all(outcomes);
    expect((result.error as ApiError).body).toMatchObject({ status: 400, code: 'MALFORMED_REQUEST' });
  });

  it('refuses a request whose client went away before the read began', async () => {
    let gone!: () => void;
    const clientGone = new Promise<void>((resolve) => (gone = resolve));
    ({ server, outcomes } = serve(
      (request) => new Promise<void>((resolve) => request.on('close', () => resolve()).on('close', gone)),
    ));
    port = await listen(server);
    const socket = connect(port, '127.0.0.1');
    socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{');
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    await clientGone;
    const [result] = await Promise.all(outcomes);
    expect((result.error as ApiError).body).toMatchObject({ status: 400, code: 'MALFORMED_REQUEST' });
  });

  describe('compressed bodies (through body-parser)', () => {
    beforeEach(async () => {
      ({ server, outcomes } = serve());
      port = await listen(server);
    });

    it('inflates gzip and treats identity as plain', async () => {
      const zipped = await send(port, gzipSync('{"name":"Zipped"}'), { 'content-encoding': 'gzip' });
      expect(zipped.body.toString()).toBe('{"name":"Zipped"}');
      const identity = await send(port, Buffer.from('{"a":1}'), { 'content-encoding': 'Identity' });
      expect(identity.body.toString()).toBe('{"a":1}');
    });

    it('answers a body that does not match its encoding with 400 and an unknown encoding with 415', async () => {
      const wrong = await send(port, Buffer.from('{"name":"Rex"}'), { 'content-encoding': 'gzip' });
      expect(wrong.status).toBe(400);
      expect(JSON.parse(wrong.body.toString()).code).toBe('MALFORMED_REQUEST');
      const unknown = await send(port, Buffer.from('{"name":"Rex"}'), { 'content-encoding': 'compress' });
      expect(unknown.status).toBe(415);
      expect(JSON.parse(unknown.body.toString()).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    });

    it('holds the limit on the inflated size (a small gzip of a large body is 413)', async () => {
      const bomb = gzipSync(Buffer.alloc(LIMIT * 64, 0x61));
      expect(bomb.length).toBeLessThan(LIMIT);
      const answer = await send(port, bomb, { 'content-encoding': 'gzip' });
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body.toString()).code).toBe('PAYLOAD_TOO_LARGE');
    });
  });
});
