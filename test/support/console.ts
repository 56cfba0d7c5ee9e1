import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { loadConsoleConfig } from '../../apps/console/src/config/console.config';
import { createConsoleApp } from '../../apps/console/src/create-console-app';
import { createGatewayTestDatabase, GatewayTestDatabase } from './gateway';

export interface ConsoleUnderTest {
  app: NestExpressApplication;
  url: string;
  database: GatewayTestDatabase;
  close(): Promise<void>;
}

/**
 * The operator console on a free loopback port, in front of `adminUrl`, its sessions in a database of its own
 * (a fresh one on DATABASE_URL's server, or an in-memory PGlite served over the wire from this process).
 */
export async function startConsole(adminUrl: string, env: Record<string, string> = {}): Promise<ConsoleUnderTest> {
  const database = await createGatewayTestDatabase('empty');
  const config = loadConsoleConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    ADMIN_URL: adminUrl,
    CONSOLE_DATABASE_URL: database.url,
    CONSOLE_SESSION_SECRET: randomBytes(32).toString('base64url'),
    ...env,
  });
  const app = await createConsoleApp(config);
  await app.listen(0, '127.0.0.1');
  return {
    app,
    database,
    url: `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`,
    close: async () => {
      await app.close();
      await database.drop();
    },
  };
}

/** A browser-less client of the console: a cookie jar, forms sent as a browser sends them. */
export class ConsoleClient {
  private readonly cookies = new Map<string, string>();
  constructor(private readonly origin: string) {}

  async request(
    method: string,
    path: string,
    form?: Record<string, string | string[]>,
  ): Promise<{ status: number; location: string | null; text: string }> {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(form ?? {}))
      for (const v of Array.isArray(value) ? value : [value]) body.append(name, v);
    const response = await fetch(`${this.origin}${path}`, {
      method,
      redirect: 'manual',
      headers: {
        cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? body.toString() : undefined,
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      const value = pair.slice(at + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(pair.slice(0, at));
      else this.cookies.set(pair.slice(0, at), value);
    }
    return { status: response.status, location: response.headers.get('location'), text: await response.text() };
  }

  /** The CSRF token of the last form on a page. */
  static csrf(html: string): string {
    const tokens = [...html.matchAll(/name="_csrf" value="([^"]+)"/g)];
    if (tokens.length === 0) throw new Error('no form with a CSRF token on the page');
    return tokens[tokens.length - 1][1];
  }

  /** A page's form, sent with its CSRF token. */
  async submit(pagePath: string, action: string, form: Record<string, string | string[]> = {}) {
    const page = await this.request('GET', pagePath);
    return this.request('POST', action, { _csrf: ConsoleClient.csrf(page.text), ...form });
  }

  async signIn(token: string) {
    return this.submit('/sign-in', '/sign-in', { token });
  }
}
