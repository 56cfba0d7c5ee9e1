import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';

/**
 * Where a gateway in development (its admin token from ADMIN_TOKEN_FILE, .data/admin-token) says where its admin
 * API listens, for `npm run keys`: the file `admin-url` beside the token, so that the CLI finds the admin port of
 * the `npm start` it runs beside without being told (ADMIN_URL, when set, still wins).
 */
export function adminUrlFile(tokenFile: string): string {
  return join(dirname(tokenFile), 'admin-url');
}

/** The URL a local client reaches a server listening on `host` at: a wildcard address means loopback. */
export function localUrl(host: string, address: AddressInfo | string | null): string {
  if (address === null || typeof address === 'string') throw new Error('the admin API is not listening on a TCP port');
  const reachable = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${address.port}`;
}

/**
 * Writes `url` to `file` (mode 600, replaced atomically: a CLI never reads half of it; the next start
 * overwrites it). Returns what removes it at shutdown, unless another gateway has written its own meanwhile.
 */
export function publishAdminUrl(file: string, url: string): () => void {
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${url}\n`, { mode: 0o600 });
  renameSync(temporary, file);
  return () => {
    try {
      if (readFileSync(file, 'utf8').trim() === url) rmSync(file, { force: true });
    } catch {
      /* already gone */
    }
  };
}
