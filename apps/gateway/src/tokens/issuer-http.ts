import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** An issuer's documents (metadata, JWKS, an introspection answer) are small: more is refused. */
const MAX_BODY_BYTES = 1024 * 1024;

/**
 * One request to an operator-configured issuer URL, its JSON answer: 200 or an error, within `timeoutMs` for the
 * whole exchange, on a connection of its own (no pool: these requests are rare, and a pooled connection the issuer
 * closed meanwhile, a restart, would fail the next one), no redirect followed.
 */
export function issuerJson(
  url: string,
  timeoutMs: number,
  options: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string } = {},
): Promise<unknown> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      {
        method: options.method ?? 'GET',
        agent: false,
        headers: {
          accept: 'application/json',
          ...(options.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(options.body)) }),
          ...options.headers,
        },
      },
      (res: IncomingMessage) => {
        if (res.statusCode !== 200) {
          res.resume();
          return reject(new Error(`${url} answered ${res.statusCode}`));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BODY_BYTES) return req.destroy(new Error(`${url} answered more than ${MAX_BODY_BYTES} bytes`));
          chunks.push(chunk);
        });
        res.on('end', () => {
          clearTimeout(timer);
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch {
            reject(new Error(`${url} answered no JSON`));
          }
        });
        res.on('error', reject);
      },
    );
    const timer = setTimeout(() => req.destroy(new Error(`${url} did not answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end(options.body);
  });
}
