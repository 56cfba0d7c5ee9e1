import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { AfterAnswer } from '../../../apps/portal/src/accounts/after-answer';
import { ConsoleClient, ConsoleUnderTest, startConsole } from '../../support/console';
import {
  adminCall,
  createGatewayTestDatabase,
  GatewayTestDatabase,
  GatewayUnderTest,
  startGateway,
} from '../../support/gateway';
import { call } from '../../support/http';
import { RunningPets, startPetsService } from '../../support/pets-service';
import { PortalUnderTest, createPortalToken, startPortal } from '../../support/portal';
import { rawRequest } from '../../support/raw-http';
import { SmtpSink, startSmtpSink } from '../../support/smtp-sink';

// This file reads what the apps write on file descriptors 1 and 2: their pino lines stay there, not in the
// artifacts/test-logs/ file every other e2e file sends them to (test/support/quiet-logs.ts).
jest.unmock('pino');

/**
 * Everything the apps write to stdout and stderr while this file runs: their pino lines (sonic-boom writes to fd 1
 * with fs.write/fs.writeSync), Nest's, and anything printed with console.* or process.std*.write.
 */
class OutputCapture {
  readonly chunks: string[] = [];
  private readonly restore: Array<() => void> = [];

  start(): void {
    // Kept, not written on: the debug lines are what this file reads, not what a terminal running npm test shows.
    const kept = (fd: unknown, data: unknown): boolean => {
      if (fd !== 1 && fd !== 2) return false;
      this.chunks.push(Buffer.isBuffer(data) ? data.toString('utf8') : String(data));
      return true;
    };
    const lengthOf = (data: unknown) => (Buffer.isBuffer(data) ? data.length : Buffer.byteLength(String(data)));
    const writeSync = fs.writeSync;
    const write = fs.write;
    const spies = [
      jest
        .spyOn(fs, 'writeSync')
        .mockImplementation(((fd: number, data: unknown, ...rest: unknown[]) =>
          kept(fd, data)
            ? lengthOf(data)
            : (writeSync as (...args: unknown[]) => number)(fd, data, ...rest)) as typeof fs.writeSync),
      jest.spyOn(fs, 'write').mockImplementation(((fd: number, data: unknown, ...rest: unknown[]) => {
        if (!kept(fd, data)) return (write as (...args: unknown[]) => void)(fd, data, ...rest);
        const callback = rest.reverse().find((arg) => typeof arg === 'function') as
          ((error: null, written: number, data: unknown) => void) | undefined;
        process.nextTick(() => callback?.(null, lengthOf(data), data));
      }) as unknown as typeof fs.write),
    ];
    for (const stream of [process.stdout, process.stderr]) {
      const original = stream.write.bind(stream);
      stream.write = ((data: unknown, ...rest: unknown[]) => {
        this.chunks.push(Buffer.isBuffer(data) ? data.toString('utf8') : String(data));
        const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
        if (callback) process.nextTick(callback);
        return true;
      }) as typeof stream.write;
      this.restore.push(() => (stream.write = original as typeof stream.write));
    }
    this.restore.push(() => spies.forEach((spy) => spy.mockRestore()));
  }

  stop(): void {
    for (const undo of this.restore.splice(0)) undo();
  }

  text(): string {
    return this.chunks.join('');
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A raw request that may well get no answer (a broken one): sent, and forgotten. */
const raw = (url: string, request: string | Buffer) => rawRequest(url, request, 3_000).catch(() => undefined);
/** The pieces a log line might hold of a secret: all of it, and each half (a token broken by a line break). */
const piecesOf = (secret: string): string[] => {
  const half = Math.floor(secret.length / 2);
  return [secret, secret.slice(0, half), secret.slice(half)];
};

/**
 * No admin token, API key, password or session secret in any log line of any app (docs/operations.md, "Logs"):
 * every app runs in this process at LOG_LEVEL=debug with its output captured; a battery of malformed requests that
 * carry the secrets (bad, broken and near-miss tokens and keys, passwords with control characters, broken headers)
 * is sent to the gateway's public port and admin API, the pets service, the portal and the console; then the
 * captured output is searched for every secret and each of its halves.
 */
describe('no secret in any log line of any app', () => {
  const output = new OutputCapture();
  const internalSecret = randomBytes(32).toString('hex');
  const consoleSessionSecret = randomBytes(32).toString('base64url');
  const portalSessionSecret = randomBytes(32).toString('hex');
  const password = `pw-${randomBytes(12).toString('hex')}`;
  let pets: RunningPets;
  let gateway: GatewayUnderTest;
  let database: GatewayTestDatabase;
  let smtp: SmtpSink;
  let portal: PortalUnderTest;
  let console_: ConsoleUnderTest;
  let apiKey: string;
  let scopedToken: string;
  let portalToken: string;
  const secrets: Record<string, string> = {};

  beforeAll(async () => {
    output.start();
    pets = await startPetsService({ logLevel: 'debug', internalSecret });
    gateway = await startGateway({
      petsUrl: pets.url,
      env: { LOG_LEVEL: 'debug', INTERNAL_SECRET: internalSecret, BAN_GRACE_MS: '60000' },
    });
    database = await createGatewayTestDatabase();
    smtp = await startSmtpSink();
    portalToken = await createPortalToken(gateway);
    portal = await startPortal({
      gateway,
      token: portalToken,
      database,
      smtpUrl: smtp.url,
      env: { LOG_LEVEL: 'debug', PORTAL_SESSION_SECRET: portalSessionSecret },
    });
    console_ = await startConsole(gateway.adminUrl, {
      LOG_LEVEL: 'debug',
      CONSOLE_SESSION_SECRET: consoleSessionSecret,
    });
    const created = await adminCall(gateway, 'POST', '/consumers', { name: 'battery', plan: 'free' });
    apiKey = (created.body as { key: { key: string } }).key.key;
    const token = await adminCall(gateway, 'POST', '/tokens', { name: 'battery-ops', scopes: ['consumers:read'] });
    scopedToken = (token.body as { token: string }).token;
    Object.assign(secrets, {
      'the root admin token': gateway.adminToken,
      'a scoped admin token': scopedToken,
      "the portal's admin token": portalToken,
      'an API key': apiKey,
      "a developer's password": password,
      'the internal secret': internalSecret,
      "the console's session secret": consoleSessionSecret,
      "the portal's session secret": portalSessionSecret,
    });
  }, 180_000);

  afterAll(async () => {
    output.stop();
    await console_?.close();
    await portal?.close();
    await smtp?.close();
    await database?.drop();
    await gateway?.close();
    await pets?.close();
  });

  it('refuses a console token broken by a line break with the sign-in page, not a 500', async () => {
    const half = Math.floor(gateway.adminToken.length / 2);
    for (const broken of [
      `${gateway.adminToken.slice(0, half)}\n${gateway.adminToken.slice(half)}`,
      `${gateway.adminToken.slice(0, half)}\r\n${gateway.adminToken.slice(half)}`,
      `${gateway.adminToken.slice(0, half)} ${gateway.adminToken.slice(half)}`,
      `${gateway.adminToken}\u0000`,
      `${gateway.adminToken.slice(0, half)}\u200b${gateway.adminToken.slice(half)}`,
    ]) {
      const reply = await new ConsoleClient(console_.url).signIn(broken);
      expect(reply.status).toBe(400);
      expect(reply.text).toContain('an admin token is one unbroken line');
      expect(reply.text).not.toContain(gateway.adminToken.slice(0, half));
    }
    // The whole token, pasted with a trailing line break, still signs in.
    expect((await new ConsoleClient(console_.url).signIn(`${gateway.adminToken}\n`)).status).toBe(303);
  });

  it('sends the battery of malformed requests to every app', async () => {
    const half = (s: string) => Math.floor(s.length / 2);
    const root = gateway.adminToken;
    const broken = (s: string) => `${s.slice(0, half(s))}\n${s.slice(half(s))}`;
    const nearMisses = (s: string) => [
      `${s}x`,
      s.slice(0, -1),
      s.toUpperCase(),
      `${s} ${s}`,
      s.split('').reverse().join(''),
    ];

    // The gateway's public port: keys that are almost right, in every place a client might put them.
    for (const key of [apiKey, ...nearMisses(apiKey), root, scopedToken]) {
      await call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });
      await call(`${gateway.url}/v1/pets?limit=1&api_key=${encodeURIComponent(key)}`);
      await call(`${gateway.url}/v1/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: key, categoryId: key }),
      });
      await call(`${gateway.url}/v1/pets`, { headers: { authorization: key, 'x-api-key': key } });
    }
    for (const request of [
      `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${broken(apiKey)}\r\n\r\n`,
      `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\u0000\r\n\r\n`,
      `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer\r\n ${apiKey}\r\n\r\n`,
      `GET /v1/pets?key=${apiKey} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"name": "${apiKey}`,
      `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    ])
      await raw(gateway.url, request);

    // The admin API: the root token, a scoped one and the portal's, broken, nearly right, in bodies and queries.
    for (const token of [root, scopedToken, portalToken]) {
      for (const wrong of nearMisses(token)) await adminCall(gateway, 'GET', '/consumers', undefined, wrong);
      await adminCall(gateway, 'GET', `/audit?actor=${encodeURIComponent(token)}`, undefined, token);
      await adminCall(gateway, 'GET', `/consumers?prefix=${encodeURIComponent(`${token}\u0000`)}`);
      await adminCall(gateway, 'POST', '/consumers', { name: token, plan: token, email: `${token}@x` });
      await adminCall(gateway, 'POST', '/consumers/battery/credits/top-ups', { amount: 1, reason: `${token}\u0000` });
      await adminCall(gateway, 'POST', '/tokens', { name: `${token}\n`, scopes: [token] }, scopedToken);
      await adminCall(gateway, 'POST', '/import', `{"consumers": [{"name": "${token}"`);
      await raw(
        gateway.adminUrl,
        `GET /consumers HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${broken(token)}\r\n\r\n`,
      );
      await raw(
        gateway.adminUrl,
        `GET /consumers HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic ${token}\u0007\r\n\r\n`,
      );
    }

    // The pets service: the internal secret nearly right, broken, and in bodies.
    for (const wrong of [...nearMisses(internalSecret), '']) {
      await call(`${pets.url}/pets`, { headers: { 'x-internal-secret': wrong } });
      await call(`${pets.url}/pets`, {
        method: 'POST',
        headers: { 'x-internal-secret': wrong, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `${internalSecret}\u0000`, categoryId: 1 }),
      });
    }
    await raw(pets.url, `GET /pets HTTP/1.1\r\nHost: x\r\nX-Internal-Secret: ${broken(internalSecret)}\r\n\r\n`);

    // The portal: a developer whose password is then sent wrong, broken and with control characters.
    const email = `battery-${Date.now()}@example.com`;
    const signUp = await portalForm('/signup', { email, password });
    expect(signUp.status).toBe(200);
    await portal.app.get(AfterAnswer).drain();
    const link = /\/verify\?token=([A-Za-z0-9_-]+)/.exec((await smtp.next(email, /Verify/)).text)![1];
    await portalForm(`/verify?token=${link}`, { token: link, password: `${password}x` }, '/verify');
    for (const wrong of [...nearMisses(password), broken(password), `${password}\u0000`, `${password}\u007f`])
      await portalForm('/login', { email, password: wrong });
    await portalForm('/login', { email: `${password}@example.com\r\nBcc: x@example.com`, password });
    await portalForm('/signup', { email: `${email}\u0000`, password: `${password}\n${password}` });
    await portalForm('/reset', { email: `${email}\n${password}` });
    for (const cookie of [`portal.sid=s%3A${portalSessionSecret}`, `portal.sid=${broken(portalSessionSecret)}`])
      await raw(portal.url, `GET /dashboard HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${cookie}\r\n\r\n`);
    await call(`${portal.url}/login?password=${encodeURIComponent(password)}`);

    // The console: tokens broken by a line break (the 500 of issue #45), near misses, cookies, query strings.
    for (const token of [root, scopedToken]) {
      for (const wrong of [broken(token), ...nearMisses(token), `${token}\u0000`, `${token}\t`]) {
        await new ConsoleClient(console_.url).signIn(wrong);
      }
      await call(`${console_.url}/sign-in?token=${encodeURIComponent(token)}`);
      await raw(
        console_.url,
        `POST /sign-in HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 300\r\n\r\ntoken=${encodeURIComponent(broken(token))}`,
      );
    }
    for (const cookie of [`console.sid=s%3A${consoleSessionSecret}`, `console.sid=${broken(consoleSessionSecret)}`])
      await raw(console_.url, `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${cookie}\r\n\r\n`);
    // A real session, for the pages that log what they do.
    const operator = new ConsoleClient(console_.url);
    expect((await operator.signIn(root)).status).toBe(303);
    await operator.submit('/consumers/battery', '/consumers/battery/credits/top-up', {
      amount: '1',
      reason: `${root}\u0000`,
    });
    await operator.request('GET', `/consumers/${encodeURIComponent(root)}`);
    await operator.request('GET', `/audit?actor=${encodeURIComponent(scopedToken)}`);
    // Whatever is logged after the answer (audit reports, mail, flushes).
    await portal.app.get(AfterAnswer).drain();
    await sleep(500);
  }, 240_000);

  it('finds none of the secrets, nor half of one, in any line the apps wrote', () => {
    const text = output.text();
    // The capture saw the apps' lines at all (else this test would pass on nothing).
    expect(text).toMatch(/"app":"gateway"/);
    expect(text).toMatch(/"app":"console"/);
    expect(text).toMatch(/"app":"portal"/);
    expect(text).toMatch(/"app":"pets"/);
    const found = Object.entries(secrets).flatMap(([what, secret]) =>
      piecesOf(secret)
        .filter((piece) => text.includes(piece) || text.includes(encodeURIComponent(piece)))
        .map((piece) => `${what} (${piece === secret ? 'whole' : 'a half'}) in: ${lineWith(text, piece)}`),
    );
    expect(found).toEqual([]);
  });

  const lineWith = (text: string, piece: string) =>
    text
      .split('\n')
      .find((line) => line.includes(piece) || line.includes(encodeURIComponent(piece)))
      ?.slice(0, 300);

  /** A portal form posted with its page's CSRF token (a new visitor each time: no cookie jar kept). */
  async function portalForm(formPath: string, fields: Record<string, string>, action = formPath) {
    const page = await fetch(`${portal.url}${formPath}`, { redirect: 'manual' });
    const html = await page.text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const cookie = page.headers
      .getSetCookie()
      .map((line) => line.split(';')[0])
      .join('; ');
    const reply = await fetch(`${portal.url}${action.split('?')[0]}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
    });
    return { status: reply.status, text: await reply.text() };
  }
});
