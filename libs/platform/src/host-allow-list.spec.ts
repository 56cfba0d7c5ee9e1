import type { IncomingMessage } from 'node:http';
import { HostAllowList, hostOfAuthority, hostOfUrl, isLoopbackHost, parseAllowedHosts } from './host-allow-list';

const requestFor = (host: string | undefined, url = '/'): IncomingMessage =>
  ({ headers: host === undefined ? {} : { host }, url }) as IncomingMessage;

describe('host allow-lists', () => {
  it('reads names, *. wildcards and IP addresses; refuses a scheme, a port, a path or a bad label, naming the variable', () => {
    expect(parseAllowedHosts(' API.example.com. , *.example.org,10.0.0.5,[::1],gateway,', 'ALLOWED_HOSTS')).toEqual([
      'api.example.com',
      '*.example.org',
      '10.0.0.5',
      '::1',
      'gateway',
    ]);
    expect(parseAllowedHosts('', 'ALLOWED_HOSTS')).toEqual([]);
    for (const wrong of [
      'https://api.example.com',
      'api.example.com:443',
      'api.example.com/v1',
      '-bad.example',
      'a..b',
      '*',
    ])
      expect(parseAllowedHosts(`ok.example,${wrong}`, 'PORTAL_ALLOWED_HOSTS')).toBe(
        `PORTAL_ALLOWED_HOSTS must be a comma-separated list of host names (api.example.com, *.example.com) or IP addresses, without scheme, port or path: "${wrong}" is not one`,
      );
  });

  it('reads the host of a Host header or URL: lower case, without port, brackets or trailing dot', () => {
    expect(hostOfAuthority('API.Example.com.:8080')).toBe('api.example.com');
    expect(hostOfAuthority('[::1]:3000')).toBe('::1');
    expect(hostOfAuthority('api.example.com:x')).toBeUndefined();
    expect(hostOfAuthority('a b')).toBeUndefined();
    expect(hostOfUrl('https://developers.example.com:8443/portal')).toBe('developers.example.com');
    expect(hostOfUrl(undefined)).toBeUndefined();
  });

  it('knows loopback names, and not 0.0.0.0 (which browsers let public pages reach)', () => {
    for (const host of ['localhost', 'app.localhost', '127.0.0.1', '127.1.2.3', '::1'])
      expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['0.0.0.0', 'localhost.example.com', '128.0.0.1', '::'])
      expect(isLoopbackHost(host)).toBe(false);
  });

  it('answers configured names, their *. subdomains and loopback names; refuses the rest, also in an absolute-form target', () => {
    const list = new HostAllowList(['api.example.com', '*.example.org']);
    for (const host of [
      'api.example.com',
      'API.EXAMPLE.COM:443',
      'eu.example.org',
      'a.b.example.org',
      'localhost:3000',
      undefined,
    ])
      expect([host, list.allows(requestFor(host))]).toEqual([host, true]);
    for (const host of [
      'example.org',
      'evil.example',
      'api.example.com.evil.example',
      'xexample.org',
      '0.0.0.0:3000',
      '',
    ])
      expect([host, list.allows(requestFor(host))]).toEqual([host, false]);
    expect(list.allows(requestFor('api.example.com', 'http://evil.example/v1/pets'))).toBe(false);
    expect(list.allows(requestFor('evil.example', 'http://api.example.com/v1/pets'))).toBe(false);
    expect(list.allows(requestFor('api.example.com', 'http://user@api.example.com:80/v1/pets'))).toBe(true);
    expect(new HostAllowList([]).allows(requestFor('api.example.com'))).toBe(false);
  });
});
