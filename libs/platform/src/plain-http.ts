/** Names that never leave this host: plain http to them cannot be read or changed on the way. */
export const LOOPBACK_HOSTNAMES: readonly string[] = ['127.0.0.1', 'localhost', '[::1]'];

/**
 * Whether an identity provider's URL may be plain http: outside production always; in production on loopback, or
 * when the operator said so for this provider (`insecureHttp`: an integration environment's stand-in on a private
 * network, docker compose's idp profile). Anyone on an http path could swap the provider's keys or read its codes.
 * `*.localhost` names are not loopback here: in a container they resolve to another container (compose's
 * `idp.localhost`), over a network.
 */
export function plainHttpAllowed(url: URL, production: boolean, insecureHttp = false): boolean {
  return url.protocol === 'https:' || !production || insecureHttp || LOOPBACK_HOSTNAMES.includes(url.hostname);
}
