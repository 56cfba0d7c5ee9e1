import { Body, Controller, Get, Module, PipeTransform, Post, Render, Req, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Request, Response } from 'express';
import { MemoryStore } from 'express-session';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { href, normalizeBasePath } from './base-path';
import { endSession, redirectAfterSave, setFlash } from './sessions';
import { typedFormRefusal } from './typed-views';
import { configureWebApp } from './web-app';

const refuseForm = typedFormRefusal<{ form: { title: string } }>();

/** A form's pipe that refuses every body, as a DTO check would refuse a wrong one. */
class RefusingPipe implements PipeTransform {
  transform(): never {
    throw refuseForm('form', { title: 'The form again' });
  }
}

@Controller()
class PagesController {
  @Get('form')
  @Render('form')
  form() {
    return { title: 'A form' };
  }

  @Post('form')
  send(@Req() request: Request, @Res() response: Response) {
    setFlash(request, 'success', 'Sent.');
    return redirectAfterSave(request, response, '/form');
  }

  @Post('refused')
  @Render('form')
  refused(@Body(RefusingPipe) _body: unknown) {
    return { title: 'Never rendered' };
  }

  @Post('sign-out')
  async signOut(@Req() request: Request, @Res() response: Response) {
    await endSession(request, response);
    response.redirect(303, '/portal/form');
  }
}

@Module({ controllers: [PagesController] })
class PagesModule {}

/** A cookie jar of one client: enough to follow a form across requests. */
class Client {
  private cookies = new Map<string, string>();
  constructor(private readonly origin: string) {}

  async request(method: string, url: string, form?: Record<string, string>) {
    const response = await fetch(`${this.origin}${url}`, {
      method,
      redirect: 'manual',
      headers: {
        cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      this.cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return { status: response.status, headers: response.headers, text: await response.text() };
  }
}

describe('libs/web: a page app', () => {
  let app: NestExpressApplication;
  let origin: string;

  beforeAll(async () => {
    const views = mkdtempSync(path.join(tmpdir(), 'web-views-'));
    mkdirSync(path.join(views, 'partials'));
    writeFileSync(path.join(views, 'partials', 'nav.hbs'), '<ul><li><a href="{{url "/form"}}">Form</a></li></ul>');
    writeFileSync(
      path.join(views, 'form.hbs'),
      '<h1>{{title}}</h1><form method="post" action="{{url "/form"}}">{{> csrf}}{{> field name="email" label="Email" value="typed" error="Wrong"}}<button>Send</button></form>',
    );
    app = await NestFactory.create<NestExpressApplication>(PagesModule, { bodyParser: false, logger: false });
    configureWebApp(app, {
      appName: 'Test app',
      viewsDir: views,
      basePath: '/portal/',
      session: {
        store: new MemoryStore(),
        schema: 'test',
        secret: 'a-secret-of-the-test-long-enough',
        cookieName: 'test.sid',
        idleTimeoutMs: 60_000,
      },
    });
    await app.listen(0, '127.0.0.1');
    origin = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });

  afterAll(() => app.close());

  it('normalizes base paths and joins them to links', () => {
    expect(normalizeBasePath(undefined)).toBe('');
    expect(normalizeBasePath('/portal/')).toBe('/portal');
    expect(() => normalizeBasePath('portal"><script>')).toThrow(/base path/);
    expect(href('', '/consumers')).toBe('/consumers');
    expect(href('/portal', '/')).toBe('/portal/');
    expect(href('/portal', 'login')).toBe('/portal/login');
  });

  it('serves pages under the base path, every link and form action carrying it, with a strict CSP', async () => {
    const client = new Client(origin);
    const page = await client.request('GET', '/portal/form');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<form method="post" action="/portal/form">');
    expect(page.text).toContain('href="/portal/form"');
    expect(page.text).toContain('href="/portal/assets/web.css"');
    expect(page.text).toMatch(/<label for="field-email">Email<\/label>/);
    expect(page.text).toMatch(/value="typed"[\s\S]*aria-describedby="field-email-error"/);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'(;|$)/);
    // Without the prefix too (a proxy that strips it).
    expect((await client.request('GET', '/form')).status).toBe(200);
    expect((await client.request('GET', '/portal/assets/web.css')).status).toBe(200);
    expect((await client.request('GET', '/portal/assets/uplot/uPlot.iife.min.js')).status).toBe(200);
  });

  it('stores no session for a form viewed anonymously; the session cookie, once set, is HttpOnly and SameSite=Lax', async () => {
    const client = new Client(origin);
    const page = await client.request('GET', '/portal/form');
    const viewed = page.headers.getSetCookie().join('\n');
    expect(viewed).not.toMatch(/test\.sid=/);
    expect(viewed).toMatch(/test\.sid\.csrf-visitor=[^;]+;.*HttpOnly/i);
    const token = /name="_csrf" value="([^"]+)"/.exec(page.text)![1];
    const sent = await client.request('POST', '/portal/form', { _csrf: token, email: 'x' });
    const cookies = sent.headers.getSetCookie().join('\n');
    expect(cookies).toMatch(/test\.sid=[^;]+;.*HttpOnly/i);
    expect(cookies).toMatch(/test\.sid=[^;]+;.*SameSite=Lax/i);
  });

  it("accepts a form with its CSRF token and refuses one without, or with another session's token (403, a page)", async () => {
    const client = new Client(origin);
    const page = await client.request('GET', '/portal/form');
    const token = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1];
    expect(token).toBeTruthy();
    const sent = await client.request('POST', '/portal/form', { _csrf: token!, email: 'x' });
    expect(sent.status).toBe(303);
    expect(sent.headers.get('location')).toBe('/portal/form');
    expect((await client.request('GET', '/portal/form')).text).toContain('Sent.');

    const refused = await client.request('POST', '/portal/form', { email: 'x' });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('Form expired');

    const other = new Client(origin);
    await other.request('GET', '/portal/form');
    const stolen = await other.request('POST', '/portal/form', { _csrf: token!, email: 'x' });
    expect(stolen.status).toBe(403);
  });

  it('signs out: the session is gone and its cookie cleared with the name and path the app set', async () => {
    const client = new Client(origin);
    const first = await client.request('GET', '/portal/form');
    const anonymous = /name="_csrf" value="([^"]+)"/.exec(first.text)![1];
    await client.request('POST', '/portal/form', { _csrf: anonymous, email: 'x' }); // now a stored session
    const page = await client.request('GET', '/portal/form');
    const token = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1];
    const signedOut = await client.request('POST', '/portal/sign-out', { _csrf: token! });
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.getSetCookie().join('\n')).toMatch(
      /test\.sid=;.*Path=\/portal;.*Expires=Thu, 01 Jan 1970/i,
    );
    // The old session id is no longer a session: its CSRF token no longer holds.
    expect((await client.request('POST', '/portal/form', { _csrf: token!, email: 'x' })).status).toBe(403);
  });

  it("renders a form refused by its pipe as the form's page again, with 400, and never runs the handler", async () => {
    const client = new Client(origin);
    const token = /name="_csrf" value="([^"]+)"/.exec((await client.request('GET', '/portal/form')).text)?.[1];
    const page = await client.request('POST', '/portal/refused', { _csrf: token!, email: 'x' });
    expect(page.status).toBe(400);
    expect(page.text).toContain('<h1>The form again</h1>');
    expect(page.text).not.toContain('Never rendered');
  });

  it('answers an unknown page with a 404 page, not JSON', async () => {
    const page = await new Client(origin).request('GET', '/portal/nowhere');
    expect(page.status).toBe(404);
    expect(page.text).toContain('Page not found');
  });
});
