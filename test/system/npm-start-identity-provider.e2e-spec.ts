import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort } from '../../scripts/free-port';
import { startScriptUntilReady, stopStartScript, StartedScript } from '../support/start-script';

/**
 * `npm start` with START_IDENTITY_PROVIDER=1 (issue #50, point 4): the stand-in identity provider starts before the
 * gateway, the gateway takes its issuer, and its demo client is bound to the "demo" consumer (made here: DEMO_KEY is
 * off), so a client-credentials token from it gets 200 on /v1, and Swagger UI's page may ask it for one (CORS).
 * The gateway and the pets service only, on an in-memory database, in folders of the test's own.
 */
describe('npm start with its identity provider', () => {
  const folder = mkdtempSync(join(tmpdir(), 'petstore-start-idp-'));
  let started: StartedScript | undefined;
  afterAll(async () => {
    await stopStartScript(started);
    rmSync(folder, { recursive: true, force: true });
  });

  it('gives a token that gets 200 as the demo consumer, from the docs page too', async () => {
    const ports = { gateway: await freePort(), pets: await freePort(), admin: await freePort(), idp: await freePort() };
    const tokenFile = join(folder, 'admin-token');
    started = await startScriptUntilReady(
      ['pets', 'gateway'],
      {
        START_IDENTITY_PROVIDER: '1',
        IDP_PORT: String(ports.idp),
        PORT: String(ports.gateway),
        HOST: '127.0.0.1',
        PETS_PORT: String(ports.pets),
        ADMIN_PORT: String(ports.admin),
        ADMIN_TOKEN_FILE: tokenFile,
        METRICS_PORT: '0',
        PETS_METRICS_PORT: '0',
        PGLITE_DATA_DIR: 'memory://',
        RATE_LIMIT_STATE_FILE: join(folder, 'rate-limits.json'),
        DEMO_KEY: 'false',
        LOG_LEVEL: 'warn',
        NODE_ENV: 'development',
        DATABASE_URL: '',
        GATEWAY_DATABASE_URL: '',
        REDIS_URL: '',
        OAUTH_ISSUERS: '',
        IDP_CLIENT_SECRET: '',
        ADMIN_URL: '',
      },
      240_000,
    );
    const output = started.output();
    const issuer = `http://127.0.0.1:${ports.idp}`;
    const secretFile = join(dirname(tokenFile), 'idp-client-secret');
    // The Ready block says where the provider is and how to get a token.
    expect(output).toMatch(
      new RegExp(`^ {2}identity provider \\(OAuth\\) +${issuer}, client demo-client bound to "demo"$`, 'm'),
    );
    expect(output).toContain(
      `curl -s -u demo-client:$(cat ${secretFile}) -d grant_type=client_credentials ${issuer}/token`,
    );
    expect(output).not.toContain('demo client not bound');

    const secret = readFileSync(secretFile, 'utf8').trim();
    const granted = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`demo-client:${secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    });
    expect(granted.status).toBe(200);
    const { access_token: token } = (await granted.json()) as { access_token: string };
    const reply = await fetch(`http://127.0.0.1:${ports.gateway}/v1/pets`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(reply.status).toBe(200);
    // Counted on the demo consumer, as its key's requests are.
    const usage = await fetch(`http://127.0.0.1:${ports.admin}/consumers/demo/usage`, {
      headers: { authorization: `Bearer ${readFileSync(tokenFile, 'utf8').trim()}` },
    });
    const windows = ((await usage.json()) as { windows: Array<{ name: string; used: number }> }).windows;
    expect(windows.find((window) => window.name === 'minute')!.used).toBe(1);

    // Swagger UI on the gateway's /docs: the document names the token URL, and the provider lets that page ask.
    const document = (await (await fetch(`http://127.0.0.1:${ports.gateway}/docs-json`)).json()) as {
      components: { securitySchemes: Record<string, { flows?: { clientCredentials?: { tokenUrl: string } } }> };
    };
    expect(document.components.securitySchemes.oauth2.flows?.clientCredentials?.tokenUrl).toBe(`${issuer}/token`);
    const docsOrigin = `http://localhost:${ports.gateway}`;
    const preflight = await fetch(`${issuer}/token`, {
      method: 'OPTIONS',
      headers: { origin: docsOrigin, 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBe(docsOrigin);
    const elsewhere = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: {
        origin: 'http://elsewhere.example',
        authorization: `Basic ${Buffer.from(`demo-client:${secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    });
    expect(elsewhere.status).toBe(400);
  }, 300_000);
});
