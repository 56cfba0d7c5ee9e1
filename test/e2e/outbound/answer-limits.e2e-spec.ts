import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { OutboundClient } from '@app/outbound';
import { HttpReceiver } from '../../support/http-receiver';

/**
 * Short limits: every test ends in well under a second, none sleeps. Under 1 s means the attempt's own deadline ended
 * it, not undici's backstops (the deadline + 1 s), with room for a loaded machine.
 */
const TIMEOUT_MS = 200;

/** Whether the server's side of a connection closes within `ms` (a bounded wait, never the test's whole timeout). */
function closedWithin(socket: Socket, ms: number): Promise<boolean> {
  if (socket.closed) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

describe('outbound requests: what an answer may cost', () => {
  let receiver: HttpReceiver;
  let outbound: OutboundClient;
  const timers: NodeJS.Timeout[] = [];

  beforeEach(async () => {
    receiver = await HttpReceiver.start();
    outbound = new OutboundClient({ requireHttps: true, allowList: ['127.0.0.1/32'] });
  });
  afterEach(async () => {
    timers.splice(0).forEach((timer) => clearInterval(timer));
    await receiver.close();
  });

  it('does not follow a redirect: the 302 comes back as it is, and its target sees nothing', async () => {
    const target = await HttpReceiver.start();
    try {
      receiver.answer((_request, response) =>
        response.writeHead(302, { location: `http://127.0.0.1:${target.port}/elsewhere` }).end(),
      );
      const result = await outbound.send(`http://127.0.0.1:${receiver.port}/hook`, { body: '{}' });
      expect(result).toMatchObject({
        kind: 'response',
        status: 302,
        headers: expect.objectContaining({ location: `http://127.0.0.1:${target.port}/elsewhere` }),
      });
      expect(receiver.requests).toHaveLength(1);
      expect(target.connections).toBe(0);
    } finally {
      await target.close();
    }
  });

  it('times out a server that sends its headers and then trickles the body: the deadline covers the body', async () => {
    receiver.answer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      timers.push(setInterval(() => response.write('.'), 20));
    });
    const result = await outbound.send(`http://127.0.0.1:${receiver.port}/slow`, { timeoutMs: TIMEOUT_MS });
    expect(result).toMatchObject({ kind: 'timeout', message: `no complete answer within ${TIMEOUT_MS} ms` });
    expect(result.latencyMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(result.latencyMs).toBeLessThan(1_000);
    expect(receiver.requests).toHaveLength(1);
  });

  it('times out a server that reads the request and never answers', async () => {
    receiver.answer(() => undefined);
    const result = await outbound.send(`http://127.0.0.1:${receiver.port}/silent`, {
      body: '{}',
      timeoutMs: TIMEOUT_MS,
    });
    expect(result).toMatchObject({ kind: 'timeout' });
    expect(result.latencyMs).toBeLessThan(1_000);
    expect(receiver.requests).toHaveLength(1);
  });

  it('times out a TCP server that accepts the connection and never sends a byte', async () => {
    const sockets = new Set<Socket>();
    // It drains what it receives (a socket that is never read never sees its peer's close either) and says nothing.
    const mute: Server = createServer((socket) => sockets.add(socket.resume()));
    await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
    try {
      const port = (mute.address() as AddressInfo).port;
      const result = await outbound.send(`http://127.0.0.1:${port}/`, { body: '{}', timeoutMs: TIMEOUT_MS });
      expect(result).toMatchObject({ kind: 'timeout' });
      expect(result.latencyMs).toBeLessThan(1_000);
      expect(sockets.size).toBe(1);
      // The attempt's connection is closed with it, not left open on the receiver; and no other is opened.
      const [socket] = sockets;
      expect(await closedWithin(socket, 1_000)).toBe(true);
      expect(sockets.size).toBe(1);
    } finally {
      sockets.forEach((socket) => socket.destroy());
      await new Promise<void>((resolve) => mute.close(() => resolve()));
    }
  });

  it('times out a name whose resolution never ends: the deadline covers the lookup too', async () => {
    const stuck = new OutboundClient({ requireHttps: false, resolver: () => new Promise<never>(() => undefined) });
    const result = await stuck.send(`http://stuck.example:${receiver.port}/`, { timeoutMs: TIMEOUT_MS });
    expect(result).toMatchObject({ kind: 'timeout', message: `no complete answer within ${TIMEOUT_MS} ms` });
    expect(result.latencyMs).toBeLessThan(1_000);
    expect(receiver.connections).toBe(0);
  });

  it('cuts a huge body at the cap and closes the connection: the rest is never read', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let serverFinished = false;
    const serverClosed = new Promise<void>((resolve) =>
      receiver.answer((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        let sent = 0;
        const pump = () => {
          // 64 MiB in all, at the pace the client reads: far more than it may keep.
          while (sent < 1024 && response.write(chunk)) sent += 1;
          if (sent >= 1024) response.end(() => (serverFinished = true));
        };
        response.on('drain', () => {
          sent += 1;
          pump();
        });
        response.on('close', () => resolve());
        pump();
      }),
    );
    const cap = 100_000;
    const result = await outbound.send(`http://127.0.0.1:${receiver.port}/huge`, {
      maxResponseBytes: cap,
      timeoutMs: 5_000,
    });
    expect(result).toMatchObject({ kind: 'response', status: 200, truncated: true });
    expect(result.kind === 'response' && result.body.length).toBe(cap);
    expect(result.kind === 'response' && result.body.equals(Buffer.alloc(cap, 'a'))).toBe(true);
    await serverClosed;
    expect(serverFinished).toBe(false);
  });

  it('keeps a body within the cap whole, and says it is not truncated', async () => {
    receiver.answer((_request, response) => response.writeHead(200).end('x'.repeat(1000)));
    const result = await outbound.send(`http://127.0.0.1:${receiver.port}/small`, { maxResponseBytes: 1000 });
    expect(result).toMatchObject({ kind: 'response', status: 200, truncated: false });
    expect(result.kind === 'response' && result.body.toString()).toBe('x'.repeat(1000));
  });

  it("throws for the caller's own mistake, a header value undici refuses, and sends nothing", async () => {
    await expect(
      outbound.send(`http://127.0.0.1:${receiver.port}/`, { headers: { 'x-note': 'a\r\nx-injected: 1' } }),
    ).rejects.toThrow('invalid x-note header');
    expect(receiver.connections).toBe(0);
  });

  it('answers too_large for headers over the limit, and answers non-2xx statuses as they are', async () => {
    receiver.answer((request, response) =>
      request.url === '/fat-headers'
        ? response.writeHead(200, { 'x-fat': 'y'.repeat(64 * 1024) }).end()
        : response.writeHead(503, { 'retry-after': '30' }).end('busy'),
    );
    expect(await outbound.send(`http://127.0.0.1:${receiver.port}/fat-headers`)).toMatchObject({
      kind: 'too_large',
    });
    expect(await outbound.send(`http://127.0.0.1:${receiver.port}/busy`)).toMatchObject({
      kind: 'response',
      status: 503,
      headers: expect.objectContaining({ 'retry-after': '30' }),
    });
  });
});
