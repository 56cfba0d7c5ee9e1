/** A response read whole, for assertions. */
export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

/** Every reply a test file received, so that a contract test can check them all against the OpenAPI document. */
export const received: Array<{ method: string; url: string; reply: Reply }> = [];

export async function call(url: string, init: RequestInit = {}): Promise<Reply> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  const reply = { status: response.status, headers: response.headers, text, body };
  received.push({ method: init.method ?? 'GET', url, reply });
  return reply;
}

export function postJson(url: string, payload: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return call(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
}

/** The codes whose Error body carries `details` too (docs/errors.md): the admin API's WEBHOOK_TARGET_REFUSED. */
const CODES_WITH_DETAILS = ['WEBHOOK_TARGET_REFUSED'];

/**
 * The Error body contract: JSON, exactly {code, message, status} (and `details`, an object, on the codes that have
 * it), status equal to the HTTP status.
 */
export function expectErrorBody(reply: Reply, status: number, code?: string): void {
  expect(reply.status).toBe(status);
  expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  const body = reply.body as Record<string, unknown>;
  const withDetails = CODES_WITH_DETAILS.includes(body.code as string);
  expect(Object.keys(body).sort()).toEqual(
    withDetails ? ['code', 'details', 'message', 'status'] : ['code', 'message', 'status'],
  );
  if (withDetails) expect(typeof body.details).toBe('object');
  expect(body.status).toBe(status);
  expect(typeof body.message).toBe('string');
  expect((body.message as string).length).toBeGreaterThan(0);
  if (code) expect(body.code).toBe(code);
}
