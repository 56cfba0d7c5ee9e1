/** One visitor of a web app: a cookie jar, and the client address a trusted proxy (loopback) says it has. */
export class PortalVisitor {
  private readonly cookies = new Map<string, string>();
  constructor(
    private readonly base: string,
    private readonly address?: string,
  ) {}

  async get(path: string) {
    return this.send('GET', path);
  }

  /** GETs the page that holds the form, then posts it with the form's CSRF token. */
  async submit(formPath: string, fields: Record<string, string>, action = formPath) {
    const page = await this.get(formPath);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1];
    if (!csrf) throw new Error(`no form at ${formPath} (${page.status})`);
    return this.send('POST', action.split('?')[0], { _csrf: csrf, ...fields });
  }

  /**
   * submit(), then, when the answer is a 303 (Post/Redirect/Get), the GET of its Location, as a browser follows it:
   * the page the developer sees, with the POST's own answer as `posted`. Any other answer is returned as it is.
   */
  async submitAndFollow(formPath: string, fields: Record<string, string>, action = formPath) {
    const posted = await this.submit(formPath, fields, action);
    if (posted.status !== 303 || !posted.location) return { ...posted, posted };
    return { ...(await this.send('GET', new URL(posted.location, `${this.base}/`).href)), posted };
  }

  private async send(method: string, path: string, form?: Record<string, string>) {
    const response = await fetch(/^https?:/.test(path) ? path : `${this.base}${path}`, {
      method,
      redirect: 'manual',
      headers: {
        cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(this.address ? { 'x-forwarded-for': this.address } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      if (/Expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(pair.slice(0, at));
      else this.cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return { status: response.status, location: response.headers.get('location'), text: await response.text() };
  }
}

/** The token of the first link to `path` (/verify, /reset/confirm) in a mail's text. */
export const linkIn = (text: string, path: string): string =>
  new RegExp(`https?://\\S+${path.replace('/', '\\/')}\\?token=([A-Za-z0-9_-]+)`).exec(text)![1];
