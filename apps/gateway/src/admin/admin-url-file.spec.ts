import { mkdtempSync, readFileSync, existsSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminUrlFile, localUrl, publishAdminUrl } from './admin-url-file';

describe('the admin URL file', () => {
  it('sits beside the admin token', () => {
    expect(adminUrlFile('.data/admin-token')).toBe(join('.data', 'admin-url'));
  });

  it.each([
    ['127.0.0.1', 'http://127.0.0.1:4002'],
    ['0.0.0.0', 'http://127.0.0.1:4002'],
    ['::', 'http://[::1]:4002'],
    ['::1', 'http://[::1]:4002'],
    ['localhost', 'http://localhost:4002'],
  ])('names a listener on %s as %s', (host, url) => {
    expect(localUrl(host, { address: host, family: 'IPv4', port: 4002 })).toBe(url);
  });

  it('is written (mode 600), overwritten by the next start, and removed only by the gateway that wrote it', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'admin-url-')), 'sub', 'admin-url');
    const forgetFirst = publishAdminUrl(file, 'http://127.0.0.1:4002');
    expect(readFileSync(file, 'utf8')).toBe('http://127.0.0.1:4002\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const forgetSecond = publishAdminUrl(file, 'http://127.0.0.1:4003');
    forgetFirst();
    expect(readFileSync(file, 'utf8')).toBe('http://127.0.0.1:4003\n');
    forgetSecond();
    expect(existsSync(file)).toBe(false);
    writeFileSync(file, 'x');
    forgetSecond();
    expect(existsSync(file)).toBe(true);
  });
});
