import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { ValidateBy } from 'class-validator';
import { securityHeaders } from './security-headers';

/** A DNS label: letters, digits and inner hyphens, 1 to 63 characters. */
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** A host name (`api.example.com`, `gateway`), a `*.`-prefixed one (its subdomains) or an IP address; else undefined. */
function normalizedEntry(raw: string): string | undefined {
  const entry = raw.trim().toLowerCase().replace(/\.$/, '');
  const address = entry.startsWith('[') && entry.endsWith(']') ? entry.slice(1, -1) : entry;
  if (isIP(address) !== 0) return address;
  const name = entry.startsWith('*.') ? entry.slice(2) : entry;
  if (name.length === 0 || name.length > 253 || !name.split('.').every((label) => LABEL.test(label))) return undefined;
  return entry;
}

/**
 * Reads a host allow-list variable: comma-separated host names, `*.example.com` for every subdomain of one, or IP
 * addresses; no scheme, port or path. Answers the normalized entries (lower case, no trailing dot, IPv6 without
 * brackets), or a sentence naming the variable and the first entry that is none of those.
 */
export function parseAllowedHosts(value: string, name: string): string[] | string {
  const entries: string[] = [];
  for (const raw of value.split(',')) {
    if (raw.trim() === '') continue;
    const entry = normalizedEntry(raw);
    if (entry === undefined)
      return `${name} must be a comma-separated list of host names (api.example.com, *.example.com) or IP addresses, without scheme, port or path: "${raw.trim()}" is not one`;
    entries.push(entry);
  }
  return entries;
}

/** Validates a host allow-list variable (parseAllowedHosts), with a line naming it and the wrong entry. */
export const EnvHostList = (name: string): PropertyDecorator =>
  ValidateBy({
    name: 'hostList',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && Array.isArray(parseAllowedHosts(value, name)),
      defaultMessage: (args) => {
        const parsed = parseAllowedHosts(String(args?.value), name);
        return typeof parsed === 'string' ? parsed : `${name} must be a string`;
      },
    },
  });

/** The host name of a URL variable (PORTAL_PUBLIC_URL, PUBLIC_ORIGIN...), as an allow-list entry; else undefined. */
export function hostOfUrl(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return normalizedEntry(new URL(url).hostname);
  } catch {
    return undefined;
  }
}

/**
 * The host name a Host header (or an absolute-form request target's authority) names: lower case, without port,
 * brackets or trailing dot. Undefined when it is not a host (then nothing allows it).
 */
export function hostOfAuthority(authority: string): string | undefined {
  const text = authority.trim().toLowerCase();
  let host: string;
  if (text.startsWith('[')) {
    const end = text.indexOf(']');
    if (end < 0 || (end + 1 < text.length && !/^:\d{1,5}$/.test(text.slice(end + 1)))) return undefined;
    host = text.slice(1, end);
  } else {
    const colon = text.indexOf(':');
    if (colon >= 0 && !/^:\d{1,5}$/.test(text.slice(colon))) return undefined;
    host = colon >= 0 ? text.slice(0, colon) : text;
  }
  return normalizedEntry(host);
}

/** Names that only ever reach this machine: `localhost` (and its subdomains), 127.0.0.0/8, ::1. */
export function isLoopbackHost(host: string): boolean {
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    (isIP(host) === 4 && host.startsWith('127.')) ||
    host === '::1' ||
    host === '::ffff:127.0.0.1'
  );
}

/**
 * The host names an app answers (DNS rebinding, issue #45.7): the configured ones (exact, or every subdomain of a
 * `*.` entry) and loopback names. A browser sends, as Host, the name of the page's own origin: a page of an
 * attacker's domain that was re-pointed at this server names that domain and is refused; loopback names cannot be
 * re-pointed (browsers resolve them to this machine themselves), so a health check or a tool on the machine, which
 * sends them, is answered in every mode. A request without Host (HTTP/1.0) cannot come from a browser: answered.
 */
export class HostAllowList {
  private readonly exact: Set<string>;
  private readonly suffixes: string[];

  constructor(readonly entries: readonly string[]) {
    this.exact = new Set(entries.filter((entry) => !entry.startsWith('*.')));
    this.suffixes = entries.filter((entry) => entry.startsWith('*.')).map((entry) => entry.slice(1));
  }

  allowsHost(host: string | undefined): boolean {
    if (host === undefined) return false;
    return isLoopbackHost(host) || this.exact.has(host) || this.suffixes.some((suffix) => host.endsWith(suffix));
  }

  /** Whether a request's Host header, and its request target when in absolute form, name an allowed host. */
  allows(request: IncomingMessage): boolean {
    const header = request.headers.host;
    if (header !== undefined && !this.allowsHost(hostOfAuthority(header))) return false;
    const url = request.url ?? '';
    if (/^https?:\/\//i.test(url)) {
      const authority = url.replace(/^https?:\/\//i, '').split(/[/?#]/, 1)[0];
      return this.allowsHost(hostOfAuthority(authority.slice(authority.lastIndexOf('@') + 1)));
    }
    return true;
  }
}

/** How a refused request is answered: JSON apps the Error body, web apps a plain page. */
export type HostRefusal = 'error-body' | 'page';

const REFUSAL_MESSAGE = 'This server does not answer for that host name.';
let refusalHeaders: ReturnType<typeof securityHeaders> | undefined;

function refuse(response: ServerResponse, kind: HostRefusal): void {
  const body =
    kind === 'error-body'
      ? JSON.stringify({ code: 'MALFORMED_REQUEST', message: REFUSAL_MESSAGE, status: 400 })
      : `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Unknown host</title></head><body><h1>Unknown host</h1><p>${REFUSAL_MESSAGE}</p></body></html>`;
  refusalHeaders ??= securityHeaders();
  for (const [name, value] of refusalHeaders) response.setHeader(name, value);
  response.statusCode = 400;
  response.setHeader(
    'content-type',
    kind === 'error-body' ? 'application/json; charset=utf-8' : 'text/html; charset=utf-8',
  );
  response.setHeader('cache-control', 'no-store');
  response.setHeader('content-length', Buffer.byteLength(body));
  response.end(body);
}

/**
 * Puts `allowList` in front of every request `server` receives, ahead of every listener (the app, the gateway's /v1
 * pipeline): a request for any other host is answered 400 here (the Error body `MALFORMED_REQUEST`, or a plain page)
 * and reaches nothing of the app. Call it once the app has installed its own request listeners.
 */
export function restrictHosts(server: Server, allowList: HostAllowList, kind: HostRefusal): void {
  const listeners = server.listeners('request') as Array<(request: IncomingMessage, response: ServerResponse) => void>;
  server.removeAllListeners('request');
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (!allowList.allows(request)) return refuse(response, kind);
    for (const listener of listeners) listener.call(server, request, response);
  });
}
