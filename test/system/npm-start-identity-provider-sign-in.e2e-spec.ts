import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../scripts/free-port';
import { startScriptUntilReady, stopStartScript, StartedScript } from '../support/start-script';

/**
 * A browser's part, over HTTP: cookies kept per origin (stricter than a browser's per host: each server here needs
 * only its own), redirects followed one by one so that each answer's cookies are kept.
 */
class Browser {
  private readonly jar = new Map<string, Map<string, string>>();

  /** The last page's answer once no redirect is left, with the URL it came from. */
  async go(url: string, init: { method?: string; form?: Record<string, string> } = {}) {
    let method = init.method ?? 'GET';
    let body = init.form ? new URLSearchParams(init.form).toString() : undefined;
    let current = url;
    for (let hop = 0; hop < 20; hop++) {
      const origin = new URL(current).origin;
      const cookies = [...(this.jar.get(origin) ?? new Map<string, string>()).entries()];
      const reply = await fetch(current, {
        method,
        redirect: 'manual',
        headers: {
          ...(cookies.length ? { cookie: cookies.map(([name, value]) => `${name}=${value}`).join('; ') } : {}),
          ...(body ? { 'content-type': 'application/x-www-form-urlencoded', origin } : {}),
        },
        body,
      });
      this.keep(origin, reply.headers.getSetCookie());
      const location = reply.headers.get('location');
      if (reply.status < 300 || reply.status >= 400 || !location)
        return { url: current, status: reply.status, html: await reply.text() };
      current = new URL(location, current).href;
      method = 'GET';
      body = undefined;
    }
    throw new Error(`too many redirects from ${url}`);
  }

  private keep(origin: string, setCookies: string[]): void {
    const cookies = this.jar.get(origin) ?? new Map<string, string>();
    for (const line of setCookies) {
      const [pair, ...attributes] = line.split(';');
      const name = pair.slice(0, pair.indexOf('=')).trim();
      const value = pair.slice(pair.indexOf('=') + 1).trim();
      const expired = attributes.some((a) => /^\s*(max-age=0|expires=thu, 01 jan 1970)/i.test(a));
      if (expired || value === '') cookies.delete(name);
      else cookies.set(name, value);
    }
    this.jar.set(origin, cookies);
  }
}

/** The href of the link (or action of the form) whose text is `text`, made absolute against `base`. */
function target(html: string, text: string, base: string): string | undefined {
  const escaped = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const link = new RegExp(`<a[^>]*href="([^"]+)"[^>]*>\\s*${escaped}\\s*</a>`).exec(html);
  if (link) return new URL(link[1].replace(/&amp;/g, '&'), base).href;
  const form = new RegExp(`<form[^>]*action="([^"]+)"[^>]*>(?:(?!</form>)[\\s\\S])*${escaped}`).exec(html);
  return form ? new URL(form[1].replace(/&amp;/g, '&'), base).href : undefined;
}

/**
 * `npm start` with START_IDENTITY_PROVIDER=1 and the console and the portal (issue #51): both sign-in pages offer the
 * stand-in provider, the Ready block says who to sign in as, olivia's authorization code flow (the console's
 * redirect, the provider's development login form, the callback) ends with the console signed in as her, and the
 * developer `dev` signs in to the portal, gets a Free key and calls the API. The four apps on an in-memory database,
 * in folders of the test's own.
 */
describe('npm start with its identity provider: the console and the portal sign people in', () => {
  const folder = mkdtempSync(join(tmpdir(), 'petstore-start-idp-people-'));
  let started: StartedScript | undefined;
  afterAll(async () => {
    await stopStartScript(started);
    rmSync(folder, { recursive: true, force: true });
  });

  it('offers the provider on both sign-in pages; olivia signs in to the console, dev to the portal', async () => {
    const ports = {
      gateway: await freePort(),
      pets: await freePort(),
      admin: await freePort(),
      portal: await freePort(),
      console: await freePort(),
      idp: await freePort(),
    };
    started = await startScriptUntilReady(
      ['pets', 'gateway', 'portal', 'console'],
      {
        START_IDENTITY_PROVIDER: '1',
        IDP_PORT: String(ports.idp),
        PORT: String(ports.gateway),
        HOST: '127.0.0.1',
        PETS_PORT: String(ports.pets),
        ADMIN_PORT: String(ports.admin),
        ADMIN_TOKEN_FILE: join(folder, 'admin-token'),
        PORTAL_PORT: String(ports.portal),
        PORTAL_DATA_DIR: folder,
        CONSOLE_PORT: String(ports.console),
        CONSOLE_SESSION_SECRET_FILE: join(folder, 'console-session-secret'),
        METRICS_PORT: '0',
        PETS_METRICS_PORT: '0',
        PGLITE_DATA_DIR: 'memory://',
        RATE_LIMIT_STATE_FILE: join(folder, 'rate-limits.json'),
        DEMO_KEY: 'false',
        LOG_LEVEL: 'warn',
        NODE_ENV: 'development',
        SHUTDOWN_GRACE_MS: '2000',
        DATABASE_URL: '',
        GATEWAY_DATABASE_URL: '',
        CONSOLE_DATABASE_URL: '',
        PORTAL_DATABASE_URL: '',
        REDIS_URL: '',
        OAUTH_ISSUERS: '',
        IDP_CLIENT_SECRET: '',
        ADMIN_URL: '',
        ADMIN_OIDC_ISSUER: '',
        CONSOLE_OIDC_ISSUER: '',
        PORTAL_OIDC_PROVIDERS: '',
        PORTAL_PUBLIC_URL: '',
      },
      400_000,
    );
    const output = started.output();
    // The Ready block says who signs in where.
    expect(output).toMatch(/^ {2}console: Demo SSO +olivia \(every scope\), sam \(read-only\), nora \(no role/m);
    expect(output).toMatch(/^ {2}portal: Demo SSO +dev \(a company developer\)/m);

    // The console: its sign-in page offers the provider; olivia's code flow ends signed in as her.
    const consoleUrl = `http://127.0.0.1:${ports.console}`;
    const browser = new Browser();
    const signInPage = await browser.go(`${consoleUrl}/sign-in`);
    const start = target(signInPage.html, 'Sign in with Demo SSO', signInPage.url);
    expect(start).toBeDefined();
    const login = await browser.go(start!);
    expect(login.url.startsWith(`http://127.0.0.1:${ports.idp}/interaction/`)).toBe(true);
    const loginForm = target(login.html, 'Sign-in', login.url);
    expect(loginForm).toBeDefined();
    const signedIn = await browser.go(loginForm!, {
      method: 'POST',
      form: { prompt: 'login', login: 'olivia', password: 'any' },
    });
    expect({ url: new URL(signedIn.url).origin, status: signedIn.status }).toEqual({ url: consoleUrl, status: 200 });
    expect(signedIn.html).toContain('Signed in as <strong>olivia.ops@example.com</strong>');

    // The portal: its sign-in page offers the provider, which takes its client and redirect URI (its login form).
    const portalUrl = `http://localhost:${ports.portal}`;
    const portalBrowser = new Browser();
    const portalLogin = await portalBrowser.go(`${portalUrl}/login`);
    const portalStart = target(portalLogin.html, 'Sign in with Demo SSO', portalLogin.url);
    expect(portalStart).toBeDefined();
    const providerForm = await portalBrowser.go(portalStart!);
    expect(providerForm.url.startsWith(`http://127.0.0.1:${ports.idp}/interaction/`)).toBe(true);
    // The company's developer signs in: an account made for them, signed in, with its first key.
    const developer = await portalBrowser.go(target(providerForm.html, 'Sign-in', providerForm.url)!, {
      method: 'POST',
      form: { prompt: 'login', login: 'dev', password: 'any' },
    });
    expect({ url: new URL(developer.url).origin, status: developer.status }).toEqual({ url: portalUrl, status: 200 });
    expect(developer.html).toContain('Welcome: here is your API key');
    // Their Free key calls the API.
    const key = /data-testid="new-key"[^>]*>([^<]+)</.exec(developer.html)![1];
    const pets = await fetch(`http://127.0.0.1:${ports.gateway}/v1/pets`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(pets.status).toBe(200);
  }, 480_000);
});
