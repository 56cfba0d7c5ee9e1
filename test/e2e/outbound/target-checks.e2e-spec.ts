import { OutboundClient, type Resolver } from '@app/outbound';
import { HttpReceiver } from '../../support/http-receiver';

/** A public address (example.com's, once): never connected to by these tests, only answered by a resolver. */
const PUBLIC_ADDRESS = '93.184.215.14';

/** A resolver that answers each call with the next of `answers` (the last one again when they run out). */
function scriptedResolver(...answers: string[][]): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolver = async (hostname: string) => {
    calls.push(hostname);
    return answers[Math.min(calls.length, answers.length) - 1];
  };
  return Object.assign(resolver, { calls });
}

describe('outbound requests: where they may go', () => {
  let receiver: HttpReceiver;
  const client = (options: ConstructorParameters<typeof OutboundClient>[0]) => new OutboundClient(options);

  beforeEach(async () => {
    receiver = await HttpReceiver.start();
  });
  afterEach(async () => {
    await receiver.close();
  });

  it('refuses a receiver on 127.0.0.1 without the allow-list: it never sees a connection', async () => {
    const result = await client({ requireHttps: false }).send(`http://127.0.0.1:${receiver.port}/hook`, {
      body: '{}',
    });
    expect(result).toMatchObject({ kind: 'refused_target', reason: 'loopback', address: '127.0.0.1' });
    expect(receiver.connections).toBe(0);
    expect(receiver.requests).toHaveLength(0);
  });

  it('refuses localhost, IPv6 loopback literals (mapped and ::1) and the decimal form of 127.0.0.1 alike', async () => {
    const outbound = client({ requireHttps: false });
    for (const url of [
      `http://localhost:${receiver.port}/`,
      `http://[::ffff:127.0.0.1]:${receiver.port}/`,
      `http://[::1]:${receiver.port}/`,
      `http://2130706433:${receiver.port}/`,
    ])
      expect([url, (await outbound.send(url)).kind]).toEqual([url, 'refused_target']);
    expect(receiver.connections).toBe(0);
  });

  it('delivers to 127.0.0.1 once 127.0.0.1/32 is allowed, over plain http: in production', async () => {
    const outbound = client({ requireHttps: true, allowList: ['127.0.0.1/32'] });
    const result = await outbound.send(`http://127.0.0.1:${receiver.port}/hook?x=1`, {
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(result).toMatchObject({ kind: 'response', status: 204, truncated: false });
    expect(receiver.requests).toEqual([
      expect.objectContaining({ method: 'POST', url: '/hook?x=1', body: '{"a":1}', localAddress: '127.0.0.1' }),
    ]);
    expect(receiver.requests[0].headers['content-type']).toBe('application/json');
    expect(receiver.requests[0].headers.cookie).toBeUndefined();
    expect(receiver.requests[0].headers.authorization).toBeUndefined();
  });

  it('requires https: in production for a public target, and refuses it before any connection', async () => {
    const resolver = scriptedResolver([PUBLIC_ADDRESS]);
    const result = await client({ requireHttps: true, resolver }).send('http://hooks.example.com/in');
    expect(result).toMatchObject({ kind: 'https_required' });
    expect(resolver.calls).toHaveLength(0);
  });

  it('catches DNS rebinding: a name that was public when saved and 127.0.0.1 when sent is refused', async () => {
    const resolver = scriptedResolver([PUBLIC_ADDRESS], ['127.0.0.1']);
    const outbound = client({ requireHttps: false, resolver });
    const url = `http://rebind.example:${receiver.port}/hook`;
    expect(await outbound.check(url)).toEqual({ kind: 'accepted', url, addresses: [PUBLIC_ADDRESS] });
    const result = await outbound.send(url, { body: '{}', timeoutMs: 1_000 });
    expect(result).toMatchObject({ kind: 'refused_target', reason: 'loopback', address: '127.0.0.1' });
    expect(result.kind === 'refused_target' && result.message).toBe(
      'rebind.example resolves to 127.0.0.1: loopback address, refused',
    );
    expect(resolver.calls).toEqual(['rebind.example', 'rebind.example']);
    expect(receiver.connections).toBe(0);
  });

  it('refuses a name whose answer holds one refused address among public ones', async () => {
    const resolver = scriptedResolver([PUBLIC_ADDRESS, '127.0.0.1']);
    const result = await client({ requireHttps: false, resolver }).send(`http://mixed.example:${receiver.port}/`);
    expect(result).toMatchObject({ kind: 'refused_target', address: '127.0.0.1' });
    expect(receiver.connections).toBe(0);
  });

  it('connects to the address it checked: a second answer (another address) is never asked for nor used', async () => {
    // The checked address, 127.0.0.1, is allowed; 127.0.0.2 is not, and a receiver waits there on the same port.
    // A client that checked one lookup and connected through another would reach the second receiver.
    const elsewhere = await HttpReceiver.start({ host: '127.0.0.2', port: receiver.port });
    try {
      const resolver = scriptedResolver(['127.0.0.1'], ['127.0.0.2']);
      const outbound = client({ requireHttps: true, allowList: ['127.0.0.1/32'], resolver });
      const result = await outbound.send(`http://pinned.example:${receiver.port}/hook`, { body: 'x' });
      expect(result).toMatchObject({ kind: 'response', status: 204 });
      expect(resolver.calls).toEqual(['pinned.example']);
      expect(receiver.requests).toHaveLength(1);
      expect(receiver.requests[0].localAddress).toBe('127.0.0.1');
      expect(receiver.requests[0].headers.host).toBe(`pinned.example:${receiver.port}`);
      expect(elsewhere.connections).toBe(0);
    } finally {
      await elsewhere.close();
    }
  });

  it('resolves and checks again on every attempt: a name re-pointed between two sends is refused the second time', async () => {
    const elsewhere = await HttpReceiver.start({ host: '127.0.0.2', port: receiver.port });
    try {
      const resolver = scriptedResolver(['127.0.0.1'], ['127.0.0.2']);
      const outbound = client({ requireHttps: false, allowList: ['127.0.0.1/32'], resolver });
      const url = `http://moving.example:${receiver.port}/hook`;
      expect(await outbound.send(url)).toMatchObject({ kind: 'response', status: 204 });
      expect(await outbound.send(url)).toMatchObject({ kind: 'refused_target', address: '127.0.0.2' });
      expect(resolver.calls).toHaveLength(2);
      expect(receiver.requests).toHaveLength(1);
      expect(elsewhere.connections).toBe(0);
    } finally {
      await elsewhere.close();
    }
  });

  it('answers connect_error for a name that does not resolve, and for a port nobody listens on', async () => {
    const failing: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example'), { code: 'ENOTFOUND' });
    };
    const outbound = client({ requireHttps: false, allowList: ['127.0.0.1/32'], resolver: failing });
    expect(await outbound.send('http://nowhere.example/')).toMatchObject({
      kind: 'connect_error',
      message: 'nowhere.example did not resolve (ENOTFOUND)',
    });
    const closed = await HttpReceiver.start();
    const port = closed.port;
    await closed.close();
    expect(await outbound.send(`http://127.0.0.1:${port}/`)).toMatchObject({
      kind: 'connect_error',
      message: expect.stringContaining('ECONNREFUSED'),
    });
  });

  it('answers invalid_url for what is not an http(s) URL, or carries credentials', async () => {
    const outbound = client({ requireHttps: false, allowList: ['127.0.0.1/32'] });
    expect(await outbound.send('not a url')).toMatchObject({ kind: 'invalid_url' });
    expect(await outbound.send(`http://user:secret@127.0.0.1:${receiver.port}/`)).toMatchObject({
      kind: 'invalid_url',
    });
    expect(receiver.connections).toBe(0);
  });
});
