import { BlockList, isIP } from 'node:net';
import { ValidateBy } from 'class-validator';

/**
 * Express's named ranges for `trust proxy`, so that TRUST_PROXY=loopback (or linklocal, uniquelocal) means the
 * same to Express and to the gateway's rate limiter.
 */
const NAMED_RANGES: Record<string, string[]> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/** Whom an app believes about X-Forwarded-For: nobody, the last N hops, or proxies at these addresses. */
export type TrustedProxies = { kind: 'none' } | { kind: 'hops'; hops: number } | { kind: 'subnets'; list: BlockList };

/**
 * Reads a trust-proxy variable (`name`, for the message): `false` (or empty, or 0), a hop count, or a
 * comma-separated list of addresses, subnets (CIDR) and Express's names loopback, linklocal, uniquelocal.
 * Returns a sentence for a wrong value. `true` is refused: it believes every address a client writes into
 * X-Forwarded-For.
 */
export function parseTrustProxy(value: string, name = 'TRUST_PROXY'): TrustedProxies | string {
  const text = value.trim();
  if (text === '' || text === 'false' || text === '0') return { kind: 'none' };
  if (text === 'true') {
    return `${name}=true believes any X-Forwarded-For a client sends: set the number of proxies in front of the app (e.g. 1) or their addresses/subnets`;
  }
  if (/^[0-9]+$/.test(text)) return { kind: 'hops', hops: Number(text) };
  const list = new BlockList();
  for (const item of text.split(',').map((part) => part.trim())) {
    const ranges = NAMED_RANGES[item] ?? [item];
    for (const range of ranges) {
      const [address, prefix, ...extra] = range.split('/');
      const family = isIP(address);
      const bits = prefix === undefined ? (family === 6 ? 128 : 32) : /^[0-9]{1,3}$/.test(prefix) ? Number(prefix) : -1;
      if (family === 0 || extra.length > 0 || bits < 0 || bits > (family === 6 ? 128 : 32)) {
        return `${name} must be false, a hop count, or a comma-separated list of IP addresses, CIDR subnets, loopback, linklocal, uniquelocal (bad item "${item}")`;
      }
      list.addSubnet(address, bits, family === 6 ? 'ipv6' : 'ipv4');
    }
  }
  return { kind: 'subnets', list };
}

/**
 * A trust-proxy setting as Express's `trust proxy` (for req.ip, req.protocol, req.hostname); same meaning.
 * A hop count becomes a number: Express reads the string '1' as the address 0.0.0.1.
 */
export function expressTrustProxy(value: string): false | number | string {
  const parsed = parseTrustProxy(value);
  if (typeof parsed === 'string' || parsed.kind === 'none') return false;
  return parsed.kind === 'hops' ? parsed.hops : value.trim();
}

/** Validates a trust-proxy variable in an environment class: a wrong value stops the app with one line. */
export const EnvTrustProxy = (name: string): PropertyDecorator =>
  ValidateBy({
    name: 'trustProxy',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && typeof parseTrustProxy(value, name) !== 'string',
      defaultMessage: (args) => String(parseTrustProxy(String(args?.value), name)),
    },
  });
