import { TargetPolicy } from './target-policy';

const url = (raw: string) => new URL(raw);

describe('TargetPolicy', () => {
  const production = new TargetPolicy({ requireHttps: true });
  const development = new TargetPolicy({ requireHttps: false });

  it('accepts an https: URL whose every address is public', () => {
    expect(production.parse('https://hooks.example.com/in')).toBeInstanceOf(URL);
    expect(
      production.vet(url('https://hooks.example.com/in'), ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']),
    ).toBeUndefined();
  });

  it('refuses a name with one refused address among public ones, naming it and why', () => {
    expect(production.vet(url('https://hooks.example.com/'), ['93.184.215.14', '10.0.0.7'])).toEqual({
      kind: 'refused_target',
      message: 'hooks.example.com resolves to 10.0.0.7: private address, refused',
      address: '10.0.0.7',
      reason: 'private',
    });
  });

  it('refuses an IP literal of a refused class', () => {
    expect(development.vet(url('http://127.0.0.1:8080/'), ['127.0.0.1'])).toMatchObject({
      kind: 'refused_target',
      reason: 'loopback',
    });
    expect(development.vet(url('http://[::ffff:7f00:1]/'), ['::ffff:7f00:1'])).toMatchObject({
      reason: 'embedded_ipv4',
    });
  });

  it('requires https: in production without the allow-list, before resolving anything', () => {
    expect(production.parse('http://hooks.example.com/')).toMatchObject({ kind: 'https_required' });
    expect(production.vet(url('http://hooks.example.com/'), ['93.184.215.14'])).toMatchObject({
      kind: 'https_required',
    });
  });

  it('takes plain http: outside production', () => {
    expect(development.parse('http://hooks.example.com/')).toBeInstanceOf(URL);
    expect(development.vet(url('http://hooks.example.com/'), ['93.184.215.14'])).toBeUndefined();
  });

  it('lets the allow-list through: a refused address in one of its blocks, over plain http: in production', () => {
    const policy = new TargetPolicy({ requireHttps: true, allowList: ['127.0.0.1/32'] });
    const target = policy.parse('http://127.0.0.1:8080/hook');
    expect(target).toBeInstanceOf(URL);
    expect(policy.vet(target as URL, ['127.0.0.1'])).toBeUndefined();
    expect(policy.vet(url('http://receiver.test/'), ['127.0.0.1'])).toBeUndefined();
    // Another loopback address is not in the block; a public one reached over http: needs HTTPS.
    expect(policy.vet(url('http://127.0.0.2/'), ['127.0.0.2'])).toMatchObject({ reason: 'loopback' });
    expect(policy.vet(url('http://hooks.example.com/'), ['93.184.215.14'])).toMatchObject({ kind: 'https_required' });
  });

  it('lets the allow-list through by host name, whatever the name resolves to', () => {
    const policy = new TargetPolicy({ requireHttps: true, allowList: 'receiver.internal' });
    expect(policy.parse('http://receiver.internal/')).toBeInstanceOf(URL);
    expect(policy.vet(url('http://receiver.internal/'), ['10.1.2.3'])).toBeUndefined();
    expect(policy.vet(url('http://other.internal/'), ['10.1.2.3'])).toMatchObject({ reason: 'private' });
  });

  it('never lets a cloud metadata address through, whatever the allow-list covers', () => {
    const policy = new TargetPolicy({
      requireHttps: false,
      allowList: ['169.254.0.0/16', '0.0.0.0/0', 'metadata.internal'],
    });
    expect(policy.vet(url('http://169.254.169.254/latest/meta-data/'), ['169.254.169.254'])).toMatchObject({
      reason: 'metadata',
    });
    expect(policy.vet(url('http://metadata.internal/'), ['169.254.169.254'])).toMatchObject({ reason: 'metadata' });
    expect(policy.vet(url('http://169.254.1.1/'), ['169.254.1.1'])).toBeUndefined();
  });

  it.each([
    ['not a URL', 'hooks.example.com/in'],
    ['another scheme', 'ftp://hooks.example.com/'],
    ['a file', 'file:///etc/passwd'],
    ['credentials', 'https://user:secret@hooks.example.com/'],
  ])('refuses %s as invalid_url', (_what, raw) => {
    expect(production.parse(raw)).toMatchObject({ kind: 'invalid_url' });
  });

  it('reads a URL host as the WHATWG parser writes it: 0x7f.1 and 2130706433 are 127.0.0.1', () => {
    expect((development.parse('http://0x7f.1/') as URL).hostname).toBe('127.0.0.1');
    expect((development.parse('http://2130706433/') as URL).hostname).toBe('127.0.0.1');
  });

  it('answers connect_error for a name without address', () => {
    expect(development.vet(url('http://hooks.example.com/'), [])).toMatchObject({ kind: 'connect_error' });
  });
});
