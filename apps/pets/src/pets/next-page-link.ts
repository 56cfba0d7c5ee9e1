import { NextPageQuery } from './pets.service';

/**
 * RFC 8288 `Link` to the next page, relative to the path this service was called on: the gateway, which knows
 * the public origin and prefix, turns it into the link its client follows.
 */
export function nextPageLink(path: string, next: NextPageQuery): string {
  const query = new URLSearchParams({ limit: String(next.limit) });
  if (next.status) query.set('status', next.status);
  query.set('after', next.after);
  return `<${path}?${query}>; rel="next"`;
}
