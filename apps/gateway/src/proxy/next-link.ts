import type { HeadersObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import type { Request } from 'express';

/** The `Link` of a listPets page, as documented in the OpenAPI document. */
export const NEXT_LINK_HEADER: HeadersObject = {
  Link: {
    description:
      'RFC 8288: present when more animals follow, as `<https://api.petstore.example.com/v1/pets?limit=20&status=sold&after=...>; rel="next"`. ' +
      'Follow it to read the next page (same `limit` and `status`, plus the opaque `after` cursor); the last page has no `rel="next"`. ' +
      'The link uses the origin and path the request was sent to.',
    required: false,
    schema: { type: 'string' },
  },
};

const URL_PATH = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/;
const URL_QUERY = /^[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*$/;
/** A DNS name or an IPv4 address, or a bracketed IPv6 address, with an optional port. */
const HOST = /^(?:[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.?|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$/;

/** Link-values of a Link field, split on the commas that separate them (not those inside <...> or quotes). */
function linkValues(field: string): string[] {
  const values: string[] = [];
  let current = '';
  let quoted = false;
  let target = false;
  for (let i = 0; i < field.length; i += 1) {
    const c = field[i];
    if (quoted) {
      if (c === '\\') current += c + (field[(i += 1)] ?? '');
      else current += c;
      if (c === '"') quoted = false;
      continue;
    }
    if (target) {
      current += c;
      if (c === '>') target = false;
      continue;
    }
    if (c === ',') {
      values.push(current.trim());
      current = '';
      continue;
    }
    if (c === '"') quoted = true;
    if (c === '<') target = true;
    current += c;
  }
  values.push(current.trim());
  return values.filter((value) => value.length > 0);
}

/** Express's compiled TRUST_PROXY setting: whether the hop at `index` (0: the socket's peer) is trusted. */
type TrustProxy = (address: string | undefined, index: number) => boolean;

/**
 * The origin the client used, as Express's `req.protocol` and `req.host` would say: X-Forwarded-Proto/Host are
 * believed only from the addresses `trust proxy` (TRUST_PROXY) trusts. Read from the headers and the app's
 * compiled setting rather than through those getters, so that it works on a request the proxy's fast path serves
 * without Express's prototypes. A host that is not a plain host name gives no origin, and the link stays
 * relative (RFC 8288 resolves it against the request's own URL).
 */
function publicOrigin(request: Request): string {
  const trust = (request.app as { get?: (name: string) => unknown } | undefined)?.get?.('trust proxy fn') as TrustProxy | undefined;
  const trusted = trust !== undefined && trust(request.socket.remoteAddress, 0);
  const field = (name: string): string | undefined => {
    const value = request.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  const own = (request.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  let protocol = own;
  if (trusted) {
    const forwarded = field('x-forwarded-proto') || own;
    const comma = forwarded.indexOf(',');
    protocol = (comma === -1 ? forwarded : forwarded.slice(0, comma)).trim();
  }
  let host = trusted ? field('x-forwarded-host') : undefined;
  if (!host) host = field('host');
  else if (host.includes(',')) host = host.slice(0, host.indexOf(',')).trimEnd();
  if ((protocol !== 'http' && protocol !== 'https') || !host || !HOST.test(host)) return '';
  return `${protocol}://${host}`;
}

/**
 * The pets service links its next page relative to the path it was asked for (`</pets?limit=7&after=...>`).
 * The client must see the same page under the URL it used: the origin it called and the public path (with
 * `/v1`). Only links to the path the service was called on are passed on, rewritten; anything else the
 * service might send (an internal address) stays behind.
 */
export function publicLinkField(upstream: string | string[] | undefined, request: Request, forwardedPath: string): string | undefined {
  if (upstream === undefined) return undefined;
  const internalPath = forwardedPath.split('?')[0];
  const publicPath = request.originalUrl.split('?')[0];
  if (!URL_PATH.test(publicPath)) return undefined;
  const origin = publicOrigin(request);
  const rewritten: string[] = [];
  for (const value of linkValues(Array.isArray(upstream) ? upstream.join(', ') : upstream)) {
    const match = /^<([^>]*)>(.*)$/s.exec(value);
    if (!match) continue;
    const [, target, parameters] = match;
    const queryAt = target.indexOf('?');
    const path = queryAt < 0 ? target : target.slice(0, queryAt);
    const query = queryAt < 0 ? '' : target.slice(queryAt);
    if (path !== internalPath || !URL_QUERY.test(query)) continue;
    rewritten.push(`<${origin}${publicPath}${query}>${parameters}`);
  }
  return rewritten.length > 0 ? rewritten.join(', ') : undefined;
}
