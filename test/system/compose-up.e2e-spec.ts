import { spawnSync, SpawnSyncReturns } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { freePort } from '../../scripts/free-port';
import { ARTIFACTS, launchChromium } from '../browser/launch-chromium';
import { runIf } from '../support/skip';

/**
 * Issue #33: docker-compose.yml started for real on a Docker engine, and attacked through the balancer's published
 * port as a user would: every service healthy, Swagger UI, 401 without a key, a Free key's 60 of 80 across both
 * gateways, the portal's sign-up through the mail catcher to a working key, a spoofed X-Forwarded-For, an oversized
 * body, a pets restart and a killed gateway under traffic, the idp profile (a client's token through the balancer, a
 * developer's sign-in to the portal in Chromium), and `down -v` leaving nothing behind.
 *
 * Run by `bash docker/compose-test.sh` (CI: .ci/run), which makes sure an engine runs and the stand-in base images
 * exist, and sets COMPOSE_UP_TEST=1 and COMPOSE_COMMAND ("docker compose" or "docker-compose"). Skipped elsewhere:
 * `npm test` starts no Docker. Timing bounds are generous: two cores run the whole stack and the traffic.
 */
const ROOT = join(__dirname, '../..');
const COMMAND = (process.env.COMPOSE_COMMAND ?? 'docker compose').split(' ');
const PROJECT = `petstore-compose-test-${process.pid}`;
const enabled = process.env.COMPOSE_UP_TEST === '1';

const secret = () => randomBytes(24).toString('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Answer {
  status: number;
  type: string;
  headers: Headers;
  text: string;
}

const ifComposeUp = runIf(enabled, 'COMPOSE_UP_TEST=1 and a Docker engine (CI runs it through docker/compose-test.sh)');
ifComposeUp.describe(`docker-compose.yml on a Docker engine (${COMMAND.join(' ')})`, () => {
  let env: Record<string, string>;
  let url: string;
  let inbox: string;
  let idpUrl: string;
  let issuer: string;
  const idpSecret = secret();
  const idpPortalSecret = secret();
  const figures: Record<string, string> = {};

  function run(command: string[], timeoutMs = 120_000): SpawnSyncReturns<string> {
    return spawnSync(command[0], command.slice(1), {
      cwd: ROOT,
      env,
      encoding: 'utf8',
      timeout: timeoutMs,
      maxBuffer: 64 * 1024 * 1024,
    });
  }
  function compose(args: string[], timeoutMs = 120_000): SpawnSyncReturns<string> {
    return run([...COMMAND, '-p', PROJECT, '-f', 'docker-compose.yml', ...args], timeoutMs);
  }
  function ok(result: SpawnSyncReturns<string>, what: string): string {
    if (result.status !== 0)
      throw new Error(
        `${what} failed (${result.status ?? result.signal}): ${result.stderr || result.stdout || result.error}`.slice(
          0,
          4000,
        ),
      );
    return result.stdout;
  }
  const docker = (args: string[], timeoutMs = 60_000) =>
    ok(run(['docker', ...args], timeoutMs), `docker ${args.join(' ')}`);

  /** Every container of the project: service, state, exit code, health. */
  function containers(): {
    id: string;
    name: string;
    service: string;
    state: string;
    exitCode: number;
    health: string;
  }[] {
    const ids = docker(['ps', '-a', '-q', '--filter', `label=com.docker.compose.project=${PROJECT}`])
      .split('\n')
      .filter(Boolean);
    if (ids.length === 0) return [];
    const inspected = JSON.parse(docker(['inspect', ...ids])) as {
      Id: string;
      Name: string;
      Config: { Labels: Record<string, string> };
      State: { Status: string; ExitCode: number; Health?: { Status: string } };
    }[];
    return inspected.map((c) => ({
      id: c.Id,
      name: c.Name.replace(/^\//, ''),
      service: c.Config.Labels['com.docker.compose.service'],
      state: c.State.Status,
      exitCode: c.State.ExitCode,
      health: c.State.Health?.Status ?? '',
    }));
  }

  const ONE_SHOTS = new Set(['migrate', 'portal-secrets', 'idp-bind']);
  /** What is not yet as it should be: one-shots exited 0, every other container running and healthy. */
  function notReady(): string[] {
    return containers()
      .filter((c) =>
        ONE_SHOTS.has(c.service)
          ? !(c.state === 'exited' && c.exitCode === 0)
          : !(c.state === 'running' && c.health === 'healthy'),
      )
      .map((c) => `${c.name}: ${c.state}${c.state === 'exited' ? ` (${c.exitCode})` : ''} ${c.health}`.trim());
  }
  async function waitHealthy(timeoutMs: number, expected: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const pending = notReady();
      const count = containers().length;
      if (pending.length === 0 && count >= expected) return;
      const failed = containers().filter((c) => ONE_SHOTS.has(c.service) && c.state === 'exited' && c.exitCode !== 0);
      if (Date.now() > deadline || failed.length > 0) {
        const logs = compose(['logs', '--no-color', '--tail', '30']).stdout;
        throw new Error(
          `not healthy within ${timeoutMs / 1000} s (${count}/${expected} containers): ${pending.join(', ')}\n${logs.slice(-6000)}`,
        );
      }
      await sleep(1000);
    }
  }

  async function get(path: string, headers: Record<string, string> = {}, init: RequestInit = {}): Promise<Answer> {
    const response = await fetch(`${url}${path}`, {
      headers,
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
      ...init,
    });
    return {
      status: response.status,
      type: response.headers.get('content-type') ?? '',
      headers: response.headers,
      text: await response.text(),
    };
  }
  const isJson = (answer: Answer) =>
    /^application\/json\b/.test(answer.type) &&
    (() => {
      try {
        JSON.parse(answer.text);
        return true;
      } catch {
        return false;
      }
    })();

  /** A key minted as the header says: `compose exec gateway node scripts/keys.js create ...` (the admin API). */
  function mintKey(args: string[]): string {
    const out = ok(compose(['exec', '-T', 'gateway', 'node', 'scripts/keys.js', 'create', ...args]), 'keys.js create');
    const key = out.trim().split('\n').pop()!;
    expect(key).toMatch(/^petk_/);
    return key;
  }

  /** How many request lines each gateway container logged for a consumer. */
  function requestsPerGateway(consumer: string): number[] {
    return containers()
      .filter((c) => c.service === 'gateway')
      .map((c) => {
        const logs = run(['docker', 'logs', c.id]);
        return `${logs.stdout}${logs.stderr}`.split('\n').filter((line) => line.includes(`"consumer":"${consumer}"`))
          .length;
      });
  }

  /**
   * GETs at the balancer while `during` runs: /v1/pets with the key from three loops, and /docs-json, which the
   * gateways serve themselves. Every answer is kept (status, JSON or not, code, Retry-After).
   */
  async function traffic(key: string, during: () => Promise<void>) {
    const answers: {
      path: string;
      status: number;
      json: boolean;
      code?: string;
      retryAfter: string | null;
      error?: string;
    }[] = [];
    let stop = false;
    const loop = async (path: string, pauseMs: number) => {
      while (!stop) {
        try {
          const answer = await get(path, { authorization: `Bearer ${key}` });
          const json = isJson(answer);
          answers.push({
            path,
            status: answer.status,
            json,
            code: json ? JSON.parse(answer.text).code : undefined,
            retryAfter: answer.headers.get('retry-after'),
          });
        } catch (error) {
          answers.push({
            path,
            status: 0,
            json: false,
            retryAfter: null,
            error: String((error as Error & { cause?: { code?: string } }).cause?.code ?? error),
          });
        }
        await sleep(pauseMs);
      }
    };
    const loops = Promise.all([
      loop('/v1/pets?limit=2', 50),
      loop('/v1/pets?limit=2', 50),
      loop('/v1/pets?limit=2', 50),
      loop('/docs-json', 100),
    ]);
    try {
      await during();
    } finally {
      stop = true;
      await loops;
    }
    return answers;
  }
  const tally = (answers: { path: string; status: number; json: boolean; code?: string }[]) =>
    answers.reduce<Record<string, number>>((all, a) => {
      const label = `${a.path.split('?')[0]} ${a.status}${a.json ? '' : ' non-JSON'}${a.code ? ` ${a.code}` : ''}`;
      all[label] = (all[label] ?? 0) + 1;
      return all;
    }, {});

  beforeAll(async () => {
    const balancerPort = await freePort();
    const mailPort = await freePort();
    const idpPort = await freePort();
    url = `http://127.0.0.1:${balancerPort}`;
    inbox = `http://127.0.0.1:${mailPort}`;
    idpUrl = `http://127.0.0.1:${idpPort}`;
    // The name the browser and the containers share (docker-compose.yml's idp header); Node here resolves no
    // *.localhost name, so the test's own calls go to idpUrl.
    issuer = `http://idp.localhost:${idpPort}`;
    // Nothing of the caller's reaches compose but the header's three secrets: no portal token, session secret or SMTP.
    const {
      INTERNAL_SECRET: _a,
      ADMIN_TOKEN: _b,
      CURSOR_SECRET: _c,
      PORTAL_ADMIN_TOKEN: _d,
      PORTAL_SESSION_SECRET: _e,
      SMTP_URL: _f,
      ...rest
    } = process.env as Record<string, string>;
    env = {
      ...rest,
      // The header's three secrets, and the two ports moved off their defaults (with the portal's addresses to match).
      INTERNAL_SECRET: secret(),
      ADMIN_TOKEN: secret(),
      CURSOR_SECRET: secret(),
      BALANCER_PORT: String(balancerPort),
      MAIL_UI_PORT: String(mailPort),
      PORTAL_PUBLIC_URL: url,
      PORTAL_API_URL: `${url}/v1`,
      COMPOSE_PROJECT_NAME: PROJECT,
      // The idp profile, as its header says (started by its own test below; the gateways know the issuer from the
      // start and fetch its keys with the first token).
      IDP_PORT: String(idpPort),
      IDP_CLIENT_SECRET: idpSecret,
      IDP_CORS_ORIGINS: url,
      OAUTH_ISSUERS: JSON.stringify([
        {
          issuer,
          audience: 'https://api.petstore.example.com',
          tokenUrl: `${issuer}/token`,
          insecureHttp: true,
        },
      ]),
      IDP_PORTAL_CLIENT_SECRET: idpPortalSecret,
      IDP_PORTAL_REDIRECT_URIS: `${url}/portal/login/oidc/demo/callback`,
      PORTAL_OIDC_PROVIDERS: JSON.stringify([
        {
          id: 'demo',
          name: 'Demo SSO',
          issuer,
          clientId: 'petstore-portal',
          clientSecret: idpPortalSecret,
          requiredDomains: ['company.example'],
          insecureHttp: true,
        },
      ]),
    };
    let started = Date.now();
    ok(compose(['build'], 25 * 60_000), 'compose build');
    figures.build = `${Math.round((Date.now() - started) / 1000)} s`;
    started = Date.now();
    ok(compose(['up', '-d'], 10 * 60_000), 'compose up -d');
    // postgres, redis, migrate, pets, 2 gateways, portal-secrets, 2 portals, mail, balancer
    await waitHealthy(6 * 60_000, 11);
    figures.healthy = `${Math.round((Date.now() - started) / 1000)} s after up -d`;
  }, 35 * 60_000);

  afterAll(() => {
    console.log(
      `compose (${COMMAND.join(' ')}): build ${figures.build}, healthy ${figures.healthy}\nmemory per container after the test's traffic:\n${figures.memory ?? '(not measured)'}`,
    );
    compose(['--profile', 'idp', 'down', '-v', '--remove-orphans', '-t', '5'], 5 * 60_000);
  }, 6 * 60_000);

  it('brings every default service up healthy, the portal and the one-shots included', () => {
    const all = containers();
    const count = (service: string) => all.filter((c) => c.service === service).length;
    expect(
      Object.fromEntries(
        ['postgres', 'redis', 'migrate', 'pets', 'gateway', 'portal-secrets', 'portal', 'mail', 'balancer'].map((s) => [
          s,
          count(s),
        ]),
      ),
    ).toEqual({
      postgres: 1,
      redis: 1,
      migrate: 1,
      pets: 1,
      gateway: 2,
      'portal-secrets': 1,
      portal: 2,
      mail: 1,
      balancer: 1,
    });
    expect(notReady()).toEqual([]);
  });

  it("publishes the balancer and the mail catcher's inbox only, never the admin API", () => {
    const published = containers()
      .filter((c) => c.state === 'running')
      .flatMap((c) =>
        docker(['port', c.id])
          .split('\n')
          .filter(Boolean)
          .map((line) => `${c.service} ${line.replace(/ -> .*:/, ' -> ')}`),
      );
    expect([...new Set(published)].sort()).toEqual([
      `balancer 8080/tcp -> ${new URL(url).port}`,
      `mail 8025/tcp -> ${new URL(inbox).port}`,
    ]);
  });

  it('serves Swagger UI and its document through the balancer', async () => {
    const ui = await get('/docs');
    expect(ui.status).toBe(200);
    expect(ui.type).toMatch(/^text\/html/);
    expect(ui.text).toMatch(/swagger-ui/i);
    const document = await get('/docs-json');
    expect(document.status).toBe(200);
    expect(JSON.parse(document.text)).toMatchObject({
      openapi: expect.stringMatching(/^3\./),
      paths: expect.objectContaining({ '/pets': expect.anything() }),
    });
  });

  it('believes no X-Forwarded-For a client sends: an anonymous client rotating it is counted on one address', async () => {
    const remaining: number[] = [];
    for (const spoofed of ['203.0.113.7', '198.51.100.8', '192.0.2.9']) {
      const answer = await get('/v1/pets', { 'x-forwarded-for': spoofed });
      expect(answer.status).toBe(401);
      remaining.push(Number(answer.headers.get('x-ratelimit-remaining')));
    }
    expect(remaining).toEqual([remaining[0], remaining[0] - 1, remaining[0] - 2]);
  });

  it('answers 401 with the JSON Error body without a key, and routes neither the admin API nor health', async () => {
    const answer = await get('/v1/pets');
    expect(answer.status).toBe(401);
    expect(answer.type).toMatch(/^application\/json/);
    expect(JSON.parse(answer.text)).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    for (const path of ['/token', '/tokens', '/consumers', '/health/ready']) {
      const other = await get(path, { authorization: `Bearer ${env.ADMIN_TOKEN}` });
      expect([path, other.status]).toEqual([path, 404]);
    }
  });

  it('gives a Free key exactly 60 of 80 requests a minute, across both gateways', async () => {
    const key = mintKey(['--plan', 'free', '--name', 'compose-free']);
    const statuses: number[] = [];
    for (let batch = 0; batch < 8; batch += 1) {
      statuses.push(
        ...(await Promise.all(
          Array.from({ length: 10 }, () =>
            get('/v1/pets?limit=1', { authorization: `Bearer ${key}` }).then((a) => a.status),
          ),
        )),
      );
    }
    expect({ 200: statuses.filter((s) => s === 200).length, 429: statuses.filter((s) => s === 429).length }).toEqual({
      200: 60,
      429: 20,
    });
    const perGateway = requestsPerGateway('compose-free');
    expect(perGateway).toHaveLength(2);
    for (const served of perGateway) expect(served).toBeGreaterThan(0);
  });

  it("refuses a body over 16 KiB with the gateway's own JSON 413, byte for byte", async () => {
    const key = mintKey(['--plan', 'pro', '--name', 'compose-big']);
    const body = JSON.stringify({ name: 'x'.repeat(20_000), species: 'cat' });
    const balancer = await get(
      '/v1/pets',
      { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      { method: 'POST', body },
    );
    const script = `fetch('http://127.0.0.1:3000/v1/pets',{method:'POST',headers:{authorization:'Bearer ${key}','content-type':'application/json'},body:'${'x'.repeat(20_000)}'}).then(async r=>console.log(JSON.stringify({status:r.status,type:r.headers.get('content-type'),text:await r.text()})))`;
    const gateway = JSON.parse(
      ok(compose(['exec', '-T', 'gateway', 'node', '-e', script]), "the gateway's own 413")
        .trim()
        .split('\n')
        .pop()!,
    );
    expect(gateway.status).toBe(413);
    expect({ status: balancer.status, type: balancer.type, text: balancer.text }).toEqual(gateway);
    expect(JSON.parse(balancer.text)).toEqual({
      code: 'PAYLOAD_TOO_LARGE',
      message: 'The request body exceeds the limit of 16384 bytes.',
      status: 413,
    });
  });

  it('signs a developer up through the portal: verification mail in the catcher, verify, key, 200 on /v1', async () => {
    const cookies = new Map<string, string>();
    const page = async (method: string, path: string, form?: Record<string, string>) => {
      const response = await fetch(`${url}${path}`, {
        method,
        redirect: 'manual',
        headers: {
          cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
          ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        body: form ? new URLSearchParams(form).toString() : undefined,
        signal: AbortSignal.timeout(30_000),
      });
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        cookies.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
      }
      return { status: response.status, location: response.headers.get('location'), text: await response.text() };
    };
    const csrf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)![1];
    const email = `dev-${Date.now()}@example.com`;

    const signUpForm = await page('GET', '/portal/signup');
    expect(signUpForm.status).toBe(200);
    const signedUp = await page('POST', '/portal/signup', {
      _csrf: csrf(signUpForm.text),
      email,
      password: 'a long enough passphrase',
    });
    expect(signedUp.status).toBe(200);

    let mail: { Text: string } | undefined;
    const deadline = Date.now() + 60_000;
    while (!mail) {
      const list = (await (await fetch(`${inbox}/api/v1/messages`)).json()) as {
        messages: { ID: string; To: { Address: string }[] }[];
      };
      const found = list.messages.find((m) => m.To.some((to) => to.Address === email));
      if (found) mail = (await (await fetch(`${inbox}/api/v1/message/${found.ID}`)).json()) as { Text: string };
      else if (Date.now() > deadline) throw new Error(`no verification mail for ${email} in ${inbox}`);
      else await sleep(500);
    }
    // The link names the balancer's public address exactly (no stray brace from a misread default).
    const link = new RegExp(`${url.replace(/[.:/]/g, '\\$&')}(/portal/verify\\?token=[A-Za-z0-9_-]+)(?:\\s|$)`).exec(
      mail.Text,
    );
    expect([link === null, mail.Text]).toEqual([false, mail.Text]);

    const verifyForm = await page('GET', link![1]);
    expect(verifyForm.status).toBe(200);
    const token = /name="token" value="([^"]+)"/.exec(verifyForm.text)![1];
    const verified = await page('POST', '/portal/verify', {
      _csrf: csrf(verifyForm.text),
      token,
      password: 'a long enough passphrase',
    });
    // Post/Redirect/Get: the first key is shown by the page the 303 leads to, behind the balancer's /portal/ too.
    expect(verified.status).toBe(303);
    expect(verified.location).toBe('/portal/keys/new');
    const shown = await page('GET', verified.location!);
    expect(shown.status).toBe(200);
    const key = /data-testid="new-key"[^>]*>([^<]+)</.exec(shown.text)![1];
    expect(key).toMatch(/^petk_/);

    const answer = await get('/v1/pets?limit=1', { authorization: `Bearer ${key}` });
    expect(answer.status).toBe(200);
  });

  /** The idp profile's provider, built and started once (its two tests share it; either may run alone). */
  let idpStarted: Promise<void> | undefined;
  function idpUp(): Promise<void> {
    idpStarted ??= (async () => {
      ok(compose(['--profile', 'idp', 'build', 'idp'], 15 * 60_000), 'compose build idp');
      ok(compose(['--profile', 'idp', 'up', '-d', '--no-deps', 'idp'], 5 * 60_000), 'compose up idp');
      const deadline = Date.now() + 120_000;
      while (!containers().some((c) => c.service === 'idp' && c.health === 'healthy')) {
        if (Date.now() > deadline) throw new Error(`idp not healthy: ${compose(['logs', '--no-color', 'idp']).stdout}`);
        await sleep(1000);
      }
    })();
    return idpStarted;
  }

  it(
    'the idp profile: its demo client, bound to the demo consumer, gets a token that gets 200 through the balancer',
    async () => {
      await idpUp();
      ok(compose(['--profile', 'idp', 'run', '--rm', '--no-deps', 'idp-bind'], 5 * 60_000), 'idp-bind');
      // Run twice: the second finds the client bound and changes nothing.
      ok(compose(['--profile', 'idp', 'run', '--rm', '--no-deps', 'idp-bind'], 5 * 60_000), 'idp-bind again');

      const basic = `Basic ${Buffer.from(`demo-client:${idpSecret}`).toString('base64')}`;
      const granted = await fetch(`${idpUrl}/token`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded', origin: url },
        body: 'grant_type=client_credentials',
      });
      expect(granted.status).toBe(200);
      // Swagger UI's page, on the balancer's origin, may read the answer.
      expect(granted.headers.get('access-control-allow-origin')).toBe(url);
      const { access_token: token } = (await granted.json()) as { access_token: string };
      const answers = [];
      for (let i = 0; i < 4; i += 1) answers.push(await get('/v1/pets?limit=1', { authorization: `Bearer ${token}` }));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
      const document = JSON.parse((await get('/docs-json')).text) as {
        components: { securitySchemes: Record<string, { flows?: { clientCredentials?: { tokenUrl: string } } }> };
      };
      expect(document.components.securitySchemes.oauth2.flows?.clientCredentials?.tokenUrl).toBe(`${issuer}/token`);
      expect((await get('/v1/pets?limit=1', { authorization: 'Bearer not.a.token' })).status).toBe(401);
    },
    25 * 60_000,
  );

  it(
    "the idp profile: a developer signs in to the balancer's portal with Demo SSO in Chromium, gets a Free key and calls the API",
    async () => {
      await idpUp();
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        await page.goto(`${url}/portal/login`);
        await page.getByRole('link', { name: 'Sign in with Demo SSO' }).click();
        // The browser resolves the issuer's name to this machine, where the provider's port is published.
        await page.waitForURL((at) => at.host === new URL(issuer).host && at.pathname.startsWith('/interaction/'));
        await page.getByPlaceholder('Enter any login').fill('dev');
        await page.getByPlaceholder('and password').fill('any: the stand-in checks none');
        await page.getByRole('button', { name: 'Sign-in' }).click();
        // The portal (in its container, through the same name) exchanged the code: the account made, its first key.
        await page.getByText('Welcome: here is your API key').waitFor();
        expect(new URL(page.url()).origin).toBe(url);
        await page.screenshot({ path: join(ARTIFACTS, 'compose-portal-sso.png'), fullPage: true });
        const key = (await page.getByTestId('new-key').textContent())?.trim() ?? '';
        expect(key).toMatch(/^petk_/);
        expect((await get('/v1/pets?limit=1', { authorization: `Bearer ${key}` })).status).toBe(200);
      } finally {
        await browser.close();
      }
    },
    25 * 60_000,
  );

  it(
    "keeps both gateways in rotation while pets restarts: only 200s and the gateway's JSON 503 with Retry-After",
    async () => {
      const key = mintKey([
        '--plan',
        'enterprise',
        '--rpm',
        '1000000',
        '--rpd',
        '100000000',
        '--name',
        'compose-pets-restart',
      ]);
      const answers = await traffic(key, async () => {
        await sleep(3000);
        ok(compose(['restart', 'pets'], 120_000), 'compose restart pets');
        await waitHealthy(120_000, 11);
        await sleep(3000);
      });
      const summary = tally(answers);
      expect(answers.filter((a) => !a.json)).toEqual([]);
      const wrong = answers.filter(
        (a) =>
          a.status !== 200 &&
          !(
            a.path.startsWith('/v1/') &&
            a.status === 503 &&
            a.code === 'SERVICE_UNAVAILABLE' &&
            Number(a.retryAfter) > 0
          ),
      );
      expect([wrong, summary]).toEqual([[], summary]);
      expect(answers.filter((a) => a.path === '/docs-json').every((a) => a.status === 200)).toBe(true);
      expect(summary['/v1/pets 200']).toBeGreaterThan(20);
      // Both gateways still answer after it (none was taken out and left out).
      const before = requestsPerGateway('compose-pets-restart');
      await Promise.all(Array.from({ length: 20 }, () => get('/v1/pets?limit=1', { authorization: `Bearer ${key}` })));
      const after = requestsPerGateway('compose-pets-restart');
      expect(after.map((n, i) => n - before[i] > 0)).toEqual([true, true]);
      console.log(`pets restart under traffic: ${JSON.stringify(summary)}`);
    },
    5 * 60_000,
  );

  it(
    'loses no GET when a gateway is killed under traffic: no 5xx, nothing but JSON',
    async () => {
      const key = mintKey([
        '--plan',
        'enterprise',
        '--rpm',
        '1000000',
        '--rpd',
        '100000000',
        '--name',
        'compose-gateway-kill',
      ]);
      const victim = containers().find((c) => c.service === 'gateway')!;
      const answers = await traffic(key, async () => {
        await sleep(3000);
        docker(['kill', victim.id]);
        // Past the resolver's validity and the failed gateway's rest: the survivor alone, then both again.
        await sleep(15_000);
        docker(['start', victim.id]);
        await waitHealthy(120_000, 11);
        await sleep(5000);
      });
      const summary = tally(answers);
      const bad = answers.filter((a) => a.status !== 200 || !a.json);
      // On failure, what nginx said about its upstreams (its error log is the balancer's stderr).
      const balancer = containers().find((c) => c.service === 'balancer')!;
      const nginxSaid =
        bad.length === 0
          ? []
          : run(['docker', 'logs', balancer.id])
              .stderr.split('\n')
              .filter((line) => /upstream/.test(line))
              .slice(-20);
      if (process.env.COMPOSE_KILL_STRICT === '0') {
        // Only for investigating a balancer change (docs/operations.md, "The compose test"): 504s counted, not failed.
        // Relaxed, they are counted and printed, and nothing else may fail.
        console.log(
          `gateway kill: ${bad.length} answers not 200 JSON (COMPOSE_KILL_STRICT=0)\n${nginxSaid.join('\n')}`,
        );
        expect(bad.filter((a) => a.status !== 504)).toEqual([]);
      } else {
        expect([bad, summary, nginxSaid]).toEqual([[], summary, nginxSaid]);
      }
      expect(summary['/v1/pets 200']).toBeGreaterThan(50);
      console.log(`gateway killed under traffic: ${JSON.stringify(summary)}`);
    },
    5 * 60_000,
  );

  it(
    'leaves nothing behind after down -v: no container, volume or network',
    () => {
      const running = containers().filter((c) => c.state === 'running');
      figures.memory = run([
        'docker',
        'stats',
        '--no-stream',
        '--format',
        '{{.Name}} {{.MemUsage}}',
        ...running.map((c) => c.id),
      ]).stdout.trim();
      ok(compose(['--profile', 'idp', 'down', '-v', '--remove-orphans', '-t', '5'], 5 * 60_000), 'compose down -v');
      const label = `label=com.docker.compose.project=${PROJECT}`;
      expect(docker(['ps', '-a', '-q', '--filter', label]).trim()).toBe('');
      expect(docker(['volume', 'ls', '-q', '--filter', label]).trim()).toBe('');
      expect(docker(['network', 'ls', '-q', '--filter', label]).trim()).toBe('');
      expect(
        docker(['volume', 'ls', '-q'])
          .split('\n')
          .filter((v) => v.startsWith(`${PROJECT}_`)),
      ).toEqual([]);
    },
    6 * 60_000,
  );
});
