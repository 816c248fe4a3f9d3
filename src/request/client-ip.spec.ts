import { clientAddressKey } from './client-ip.js';

describe('clientAddressKey', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:cb00:7107', '203.0.113.7'],
    ['0:0:0:0:0:ffff:203.0.113.7', '203.0.113.7'],
  ])('keys IPv4 %j as %j', (address, key) => {
    expect(clientAddressKey(address, 64)).toBe(key);
  });

  it('gives every spelling of one IPv6 address, and every address of one /64, the same key', () => {
    const spellings = [
      '2001:db8:0:1::1',
      '2001:DB8:0:1:0:0:0:1',
      '2001:0db8:0000:0001:0000:0000:0000:0001',
      '2001:db8::1:0:0:0:1',
      '2001:db8:0:1:ffff:ffff:ffff:ffff',
      '2001:db8:0:1:1234:5678:9abc:def0',
    ];
    expect(new Set(spellings.map((address) => clientAddressKey(address, 64)))).toEqual(new Set(['2001:db8:0:1::/64']));
    expect(clientAddressKey('2001:db8:0:2::1', 64)).toBe('2001:db8:0:2::/64');
  });

  it('cuts at the configured prefix, and keeps the whole address at 128 in RFC 5952 form', () => {
    expect(clientAddressKey('2001:db8:abcd:12ff::1', 48)).toBe('2001:db8:abcd::/48');
    expect(clientAddressKey('2001:db8:abcd:12ff::1', 56)).toBe('2001:db8:abcd:1200::/56');
    expect(clientAddressKey('2001:0DB8:0:0:1:0:0:1', 128)).toBe('2001:db8::1:0:0:1');
    expect(clientAddressKey('::1', 128)).toBe('::1');
  });

  it.each(['fe80::1%eth0', `fe80::1%${'z'.repeat(400)}`, 'garbage', '1.2.3', '01.2.3.4', '', undefined, '2001:db8::1/64'])('refuses %j', (address) => {
    expect(clientAddressKey(address, 64)).toBeUndefined();
  });
});
