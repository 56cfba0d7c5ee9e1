import { GatewayUnderTest, mintKey } from '../../support/gateway';
import { call } from '../../support/http';
import { openSocket, RawReply, readReply } from '../../support/raw-http';
import { withStack } from '../../support/with-stack';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The gateway reads request bodies itself (libs/errors/src/request-body.ts). Under a burst sent straight at two
 * instances, every body must arrive whole and exactly once, however it was framed (Content-Length, or chunked
 * in pieces that split a multi-byte character), and bodies over the limit in the same burst must be refused
 * without anything reaching the pets service.
 */
describe('request bodies under a burst at two gateway instances', () => {
  const stack = withStack({ pets: {}, database: true, gateways: { a: {}, b: {} } });

  let key: string;

  beforeAll(async () => {
    key = await mintKey(stack.a, 'enterprise', 'body-burst', { perMinute: 1_000_000, perDay: 100_000_000 });
  });

  /** Sends `body` to `gateway` over a raw connection, chunked in `pieces` writes a few ms apart, or with a Content-Length. */
  async function post(gateway: GatewayUnderTest, body: Buffer, chunked: boolean): Promise<RawReply> {
    const host = new URL(gateway.url).host;
    const socket = await openSocket(gateway.url);
    const reply = readReply(socket, 20_000);
    const head = `POST /v1/pets HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nConnection: close\r\n`;
    if (!chunked) {
      socket.write(Buffer.concat([Buffer.from(`${head}Content-Length: ${body.length}\r\n\r\n`), body]));
    } else {
      socket.write(`${head}Transfer-Encoding: chunked\r\n\r\n`);
      // Cut where a multi-byte character starts plus one: the first piece ends inside it.
      const cut = body.indexOf(Buffer.from('é')) + 1;
      for (const piece of [body.subarray(0, cut), body.subarray(cut)]) {
        socket.write(`${piece.length.toString(16)}\r\n`);
        socket.write(piece);
        socket.write('\r\n');
        await sleep(2);
      }
      socket.write('0\r\n\r\n');
    }
    try {
      return await reply;
    } finally {
      socket.destroy();
    }
  }

  it('creates every animal of 200 concurrent posts exactly once, byte for byte, and refuses the oversized ones', async () => {
    const run = Date.now().toString(36);
    const sent = Array.from({ length: 200 }, (_, i) => ({ name: `Burst ${run} ${i} é€🐾`, categoryId: 1 + (i % 10) }));
    const oversized = Buffer.from(JSON.stringify({ name: 'Too big é', categoryId: 1, padding: 'x'.repeat(17 * 1024) }));

    const replies = await Promise.all([
      ...sent.map((pet, i) => post(i % 2 ? stack.b : stack.a, Buffer.from(JSON.stringify(pet)), i % 4 < 2)),
      ...Array.from({ length: 10 }, (_, i) => post(i % 2 ? stack.b : stack.a, oversized, true)),
    ]);

    const created = replies.slice(0, 200);
    const refused = replies.slice(200);
    expect(created.map((reply) => reply.status)).toEqual(sent.map(() => 201));
    for (const reply of refused) {
      expect(reply.status).toBe(413);
      expect(reply.json).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    }

    // What the pets service holds: each sent animal once, with the name as sent; nothing of the oversized bodies.
    const stored: Array<{ name: string; categoryId: number }> = [];
    for (let url: string | undefined = `${stack.pets.url}/pets?limit=100`; url;) {
      const page = await call(url);
      stored.push(...(page.body as Array<{ name: string; categoryId: number }>));
      const next = /<([^>]+)>;\s*rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
      url = next ? new URL(next, stack.pets.url).toString() : undefined;
    }
    const ours = stored
      .filter((pet) => pet.name.startsWith(`Burst ${run} `))
      .map(({ name, categoryId }) => ({ name, categoryId }));
    expect(ours.sort((a, b) => a.name.localeCompare(b.name))).toEqual(
      [...sent].sort((a, b) => a.name.localeCompare(b.name)),
    );
    expect(stored.some((pet) => pet.name.startsWith('Too big'))).toBe(false);
  });
});
