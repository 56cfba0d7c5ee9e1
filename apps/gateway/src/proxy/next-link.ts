import type { HeadersObject } from '@nestjs/swagger';

/** The `Link` of a listPets page, as documented in the OpenAPI document. */
export const NEXT_LINK_HEADER: HeadersObject = {
  Link: {
    description:
      'RFC 8288: present when more animals follow, as `</v1/pets?limit=20&status=sold&after=...>; rel="next"`. ' +
      'Follow it to read the next page (same `limit` and `status`, plus the opaque `after` cursor); the last page has no `rel="next"`. ' +
      'The target is a relative reference, resolved against the URL of the request (RFC 3986, section 5), unless the ' +
      'deployment has configured its public origin: then it is absolute under that origin (`<https://api.petstore.example.com/v1/pets?...>`). ' +
      "It is never built from the request's `Host` or `X-Forwarded-Host`.",
    required: false,
    schema: { type: 'string' },
  },
};

const URL_PATH = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/;
const URL_QUERY = /^[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*$/;

const [BACKSLASH, QUOTE, COMMA, LESS_THAN, GREATER_THAN] = ['\\', '"', ',', '<', '>'].map((c) => c.charCodeAt(0));

/**
 * Link-values of a Link field, split on the commas that separate them (not those inside <...> or quotes). Slices
 * between separators rather than a string built a character at a time: this runs on every page of a list.
 */
function linkValues(field: string): string[] {
  const values: string[] = [];
  let start = 0;
  let quoted = false;
  let target = false;
  for (let i = 0; i < field.length; i += 1) {
    const c = field.charCodeAt(i);
    if (quoted) {
      if (c === BACKSLASH) i += 1;
      else if (c === QUOTE) quoted = false;
    } else if (target) {
      if (c === GREATER_THAN) target = false;
    } else if (c === COMMA) {
      values.push(field.slice(start, i).trim());
      start = i + 1;
    } else if (c === QUOTE) quoted = true;
    else if (c === LESS_THAN) target = true;
  }
  values.push(field.slice(start).trim());
  return values.filter((value) => value.length > 0);
}

/**
 * The pets service links its next page relative to the path it was asked for (`</pets?limit=7&after=...>`).
 * The client must see the same page under the URL it used: the public path (with `/v1`) of its request target, under
 * `origin`, the configured public origin (PUBLIC_ORIGIN), or none: a relative reference, which RFC 8288 resolves
 * against the request's own URL. The origin is never read from the request (its Host or X-Forwarded-Host are the
 * client's to write). Only links to the path the service was called on are passed on, rewritten; anything else
 * the service might send (an internal address) stays behind.
 *
 * `publicTarget`: the request target as the router parsed it, in origin form (`/v1/pets?limit=7`; a request line
 * in absolute form is reduced to it first).
 */
export function publicLinkField(
  upstream: string | string[] | undefined,
  publicTarget: string,
  forwardedPath: string,
  origin = '',
): string | undefined {
  if (upstream === undefined) return undefined;
  const internalPath = forwardedPath.split('?')[0];
  const publicPath = publicTarget.split('?')[0];
  if (!URL_PATH.test(publicPath)) return undefined;
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
