/**
 * Cache-Control of every /v1 answer. Each one answers a request with credentials (or refuses it), carries its
 * caller's rate-limit state and is stale by the caller's next request: no cache may keep it. `no-store` is what
 * keeps every cache, the browser's included, from storing it; `private` repeats for shared caches (a CDN, a
 * corporate proxy), the ones that could hand one caller's answer to another, that it belongs to one caller.
 */
export const API_CACHE_CONTROL = 'private, no-store';
