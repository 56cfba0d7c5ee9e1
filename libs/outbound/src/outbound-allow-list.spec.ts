import { OutboundAllowList } from './outbound-allow-list';

describe('OutboundAllowList', () => {
  it('reads address blocks, single addresses and host names, as an array or a comma-separated value', () => {
    const list = OutboundAllowList.parse(' 127.0.0.1/32, 10.20.0.0/16 ,fd00::/8,::1, Hooks.Internal., *.corp.example');
    expect(list.allowsAddress('127.0.0.1')).toBe(true);
    expect(list.allowsAddress('127.0.0.2')).toBe(false);
    expect(list.allowsAddress('10.20.255.1')).toBe(true);
    expect(list.allowsAddress('10.21.0.1')).toBe(false);
    expect(list.allowsAddress('fd12::1')).toBe(true);
    expect(list.allowsAddress('::1')).toBe(true);
    expect(list.allowsHost('hooks.internal')).toBe(true);
    expect(list.allowsHost('HOOKS.internal.')).toBe(true);
    expect(list.allowsHost('other.internal')).toBe(false);
    expect(list.allowsHost('a.b.corp.example')).toBe(true);
    expect(list.allowsHost('corp.example')).toBe(false);
    expect(OutboundAllowList.parse(['127.0.0.1/32']).allowsAddress('127.0.0.1')).toBe(true);
  });

  it('matches an IPv4-mapped address against the IPv4 blocks', () => {
    expect(OutboundAllowList.parse('127.0.0.1/32').allowsAddress('::ffff:127.0.0.1')).toBe(true);
  });

  it('never takes an IP literal for a host name', () => {
    expect(OutboundAllowList.parse('127.0.0.1').allowsHost('127.0.0.1')).toBe(false);
  });

  it('is empty without entries', () => {
    expect(OutboundAllowList.parse('').isEmpty).toBe(true);
    expect(OutboundAllowList.EMPTY.allowsAddress('127.0.0.1')).toBe(false);
  });

  it.each([
    '127.0.0.1/33',
    'fd00::/129',
    'http://hooks.internal',
    'hooks.internal:8080',
    '-bad.example',
    '10.0.0.0/8/8',
  ])('refuses the entry %s, naming it', (entry) => {
    expect(() => OutboundAllowList.parse(['127.0.0.1', entry])).toThrow(entry);
  });
});
