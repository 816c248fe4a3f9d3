import { checkAddress, checkUrl, literalAddress, type ResolvedAddress, type Resolver } from './webhook-address.js';

const reasonOf = (ip: string, allowPrivate = false) => {
  const verdict = checkAddress(ip, allowPrivate);
  return verdict.allowed ? 'allowed' : verdict.reason;
};

describe('checkAddress', () => {
  it.each([
    ['93.184.215.14'],
    ['8.8.8.8'],
    ['1.1.1.1'],
    ['2606:4700:4700::1111'],
    ['2a00:1450:4001:830::200e'],
    // NAT64 (RFC 6052) and IPv4-mapped forms of a public IPv4 reach that IPv4.
    ['64:ff9b::5db8:d70e'],
    ['64:ff9b::93.184.215.14'],
    ['::ffff:93.184.215.14'],
    ['::ffff:5db8:d70e'],
  ])('allows the global unicast address %s', (ip) => {
    expect(reasonOf(ip)).toBe('allowed');
  });

  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['100.64.0.1', 'carrier-grade-nat'],
    ['100.127.255.255', 'carrier-grade-nat'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fec0::1', 'site-local'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['ff0e::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['192.88.99.1', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['2001:2::1', 'benchmarking'],
    ['100::1', 'reserved'],
    ['2001:10::1', 'reserved'],
    ['4000::1', 'reserved'],
    ['5f00::1', 'reserved'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['192.0.0.192', 'metadata'],
    ['168.63.129.16', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['fd00:ec2:0::254', 'metadata'],
  ])('refuses %s as %s', (ip, reason) => {
    expect(reasonOf(ip)).toBe(reason);
  });

  it.each([
    // IPv4-mapped, in dotted and hexadecimal forms.
    ['::ffff:127.0.0.1', 'ipv4-mapped loopback'],
    ['::ffff:7f00:1', 'ipv4-mapped loopback'],
    ['0:0:0:0:0:ffff:7f00:0001', 'ipv4-mapped loopback'],
    ['::ffff:10.1.2.3', 'ipv4-mapped private'],
    ['::ffff:169.254.169.254', 'ipv4-mapped metadata'],
    ['::ffff:a9fe:a9fe', 'ipv4-mapped metadata'],
    ['::ffff:169.254.0.1', 'ipv4-mapped link-local'],
    ['::ffff:100.64.0.1', 'ipv4-mapped carrier-grade-nat'],
    ['::ffff:0.0.0.0', 'ipv4-mapped unspecified'],
    ['::ffff:224.0.0.1', 'ipv4-mapped multicast'],
    ['::ffff:255.255.255.255', 'ipv4-mapped broadcast'],
    ['::ffff:192.0.2.1', 'ipv4-mapped documentation'],
    ['::ffff:198.18.0.1', 'ipv4-mapped benchmarking'],
    ['::ffff:240.0.0.1', 'ipv4-mapped reserved'],
    // IPv4-compatible (deprecated): refused whatever it carries.
    ['::127.0.0.1', 'ipv4-compatible loopback'],
    ['::7f00:1', 'ipv4-compatible loopback'],
    ['::10.0.0.1', 'ipv4-compatible private'],
    ['::169.254.169.254', 'ipv4-compatible metadata'],
    ['::93.184.215.14', 'ipv4-compatible'],
    ['::0.0.0.2', 'ipv4-compatible unspecified'],
    // NAT64, well-known prefix: judged by its IPv4; the local-use prefix is refused.
    ['64:ff9b::127.0.0.1', 'nat64 loopback'],
    ['64:ff9b::7f00:1', 'nat64 loopback'],
    ['64:ff9b::a00:1', 'nat64 private'],
    ['64:ff9b::a9fe:a9fe', 'nat64 metadata'],
    ['64:ff9b::6440:1', 'nat64 carrier-grade-nat'],
    ['64:ff9b::e000:1', 'nat64 multicast'],
    ['64:ff9b:1::5db8:d70e', 'nat64-local-use'],
    ['64:ff9b:1:7f00:1::', 'nat64-local-use'],
    // 6to4: IPv4 in bits 16–48; refused outright, named after its IPv4 when that is refused too.
    ['2002:7f00:1::1', '6to4 loopback'],
    ['2002:a00:1::', '6to4 private'],
    ['2002:a9fe:a9fe::1', '6to4 metadata'],
    ['2002:5db8:d70e::1', '6to4'],
    // Teredo: server IPv4 in bits 32–64, client IPv4 in the last 32 bits inverted.
    ['2001:0:7f00:1::', 'teredo loopback'],
    ['2001:0:5db8:d70e::f5ff:fffe', 'teredo private'], // client 10.0.0.1
    ['2001:0:5db8:d70e::80ff:fffe', 'teredo loopback'], // client 127.0.0.1
    ['2001:0:5db8:d70e:0:0:a247:28f1', 'teredo'], // client 93.184.215.14
    // IPv4-translated (SIIT).
    ['::ffff:0:7f00:1', 'ipv4-translated loopback'],
    ['::ffff:0:5db8:d70e', 'ipv4-translated'],
  ])('judges %s by the IPv4 it carries: %s', (ip, reason) => {
    expect(reasonOf(ip)).toBe(reason);
  });

  it.each([['fe80::1%eth0'], ['fe80::1%1'], ['::1%lo']])('refuses the zone id in %s', (ip) => {
    expect(reasonOf(ip)).toBe('zone-id');
    expect(reasonOf(ip, true)).toBe('zone-id');
  });

  it.each([
    [''],
    ['localhost'],
    ['example.com'],
    ['127.1'],
    ['2130706433'],
    ['0x7f000001'],
    ['0x7f.0.0.1'],
    ['0177.0.0.1'],
    ['127.0.0.01'],
    ['256.0.0.1'],
    [' 127.0.0.1'],
    ['127.0.0.1 '],
    ['[::1]'],
    ['::1::'],
    ['::ffff:127.1'],
    ['10.0.0.0/8'],
  ])('refuses the unparseable %j', (ip) => {
    expect(reasonOf(ip)).toBe('invalid');
    expect(reasonOf(ip, true)).toBe('invalid');
  });

  describe('with private targets allowed', () => {
    it.each([
      ['127.0.0.1'],
      ['::1'],
      ['10.0.0.1'],
      ['192.168.1.1'],
      ['172.20.0.5'],
      ['169.254.1.1'],
      ['fe80::1'],
      ['100.64.0.1'],
      ['fd12:3456::1'],
      ['::ffff:127.0.0.1'],
      ['64:ff9b::a00:1'],
      ['93.184.215.14'],
    ])('allows %s', (ip) => {
      expect(reasonOf(ip, true)).toBe('allowed');
    });

    it.each([
      ['0.0.0.0', 'unspecified'],
      ['::', 'unspecified'],
      ['224.0.0.1', 'multicast'],
      ['ff02::1', 'multicast'],
      ['255.255.255.255', 'broadcast'],
      ['::ffff:0.0.0.0', 'ipv4-mapped unspecified'],
      ['169.254.169.254', 'metadata'],
      ['fd00:ec2::254', 'metadata'],
      ['100.100.100.200', 'metadata'],
      ['192.0.0.192', 'metadata'],
      ['::ffff:169.254.169.254', 'ipv4-mapped metadata'],
      ['64:ff9b::a9fe:a9fe', 'nat64 metadata'],
      ['192.0.2.1', 'documentation'],
      ['198.18.0.1', 'benchmarking'],
      ['240.0.0.1', 'reserved'],
      ['2002:7f00:1::1', '6to4'],
      ['2001:0:7f00:1:0:0:a247:28f1', 'teredo'],
      ['2001:0:7f00:1::', 'teredo broadcast'], // client 255.255.255.255
      ['::127.0.0.1', 'ipv4-compatible'],
    ])('still refuses %s as %s', (ip, reason) => {
      expect(reasonOf(ip, true)).toBe(reason);
    });
  });
});

describe('literalAddress', () => {
  it('takes an IP host as it is and an IPv6 one without its brackets', () => {
    expect(literalAddress('127.0.0.1')).toBe('127.0.0.1');
    expect(literalAddress('[::1]')).toBe('::1');
    expect(literalAddress('example.com')).toBeNull();
    expect(literalAddress('[example.com]')).toBeNull();
  });
});

describe('checkUrl', () => {
  const lookups: string[] = [];
  const resolverOf =
    (answers: Record<string, string[]>): Resolver =>
    async (hostname) => {
      lookups.push(hostname);
      const addresses = answers[hostname];
      if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return addresses.map((address): ResolvedAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
  const resolver = resolverOf({
    'hooks.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    localhost: ['127.0.0.1', '::1'],
    'mixed.example.com': ['93.184.215.14', '10.0.0.7'],
    'metadata.example.com': ['169.254.169.254'],
    'mapped.example.com': ['::ffff:127.0.0.1'],
    'empty.example.com': [],
  });
  const check = (raw: string, allowPrivate = false) => checkUrl(raw, { allowPrivate, resolver });
  const codeOf = async (raw: string, allowPrivate = false) => {
    const verdict = await check(raw, allowPrivate);
    return verdict.ok ? 'ok' : verdict.code;
  };

  beforeEach(() => {
    lookups.length = 0;
  });

  it('accepts an https URL whose every address is global, and gives it parsed', async () => {
    const verdict = await check('https://hooks.example.com/leads?x=1');
    expect(verdict).toEqual({ ok: true, url: new URL('https://hooks.example.com/leads?x=1') });
    expect(lookups).toEqual(['hooks.example.com']);
  });

  it('refuses what is not an absolute URL', async () => {
    for (const raw of ['', 'hooks.example.com/leads', '/leads', 'https://', 'https://exa mple.com/', 'https://[::1/']) {
      expect(await codeOf(raw)).toBe('invalid_url');
    }
  });

  it('refuses a URL over 2048 characters, and takes one of exactly 2048', async () => {
    const base = 'https://hooks.example.com/';
    expect(await codeOf(base + 'a'.repeat(2048 - base.length))).toBe('ok');
    expect(await check(base + 'a'.repeat(2049 - base.length))).toEqual({ ok: false, code: 'too_long', detail: 'The URL is longer than 2048 characters.' });
  });

  it('allows https only, and http as well with private targets allowed', async () => {
    expect(await check('http://hooks.example.com/')).toEqual({ ok: false, code: 'scheme_not_allowed', detail: 'The URL must be https.' });
    expect(await codeOf('http://hooks.example.com/', true)).toBe('ok');
    for (const raw of ['ftp://hooks.example.com/', 'ws://hooks.example.com/', 'file:///etc/passwd', 'mailto:a@example.com', 'javascript:alert(1)']) {
      expect(await codeOf(raw)).toBe('scheme_not_allowed');
      expect(await codeOf(raw, true)).toBe('scheme_not_allowed');
    }
  });

  it('refuses a user name or password in the URL', async () => {
    for (const raw of ['https://user:secret@hooks.example.com/', 'https://user@hooks.example.com/', 'https://:secret@hooks.example.com/']) {
      expect(await codeOf(raw)).toBe('credentials_not_allowed');
    }
    expect(lookups).toEqual([]);
  });

  it('refuses a fragment, even an empty one', async () => {
    expect(await codeOf('https://hooks.example.com/leads#top')).toBe('invalid_url');
    expect(await codeOf('https://hooks.example.com/leads#')).toBe('invalid_url');
    expect(await codeOf('https://hooks.example.com/leads?a=%23')).toBe('ok');
  });

  it('checks a literal IP host without resolving it', async () => {
    expect(await check('https://127.0.0.1/')).toEqual({ ok: false, code: 'address_not_allowed', detail: '127.0.0.1 is a loopback address.' });
    expect(await check('https://[::ffff:127.0.0.1]:8443/')).toEqual({
      ok: false,
      code: 'address_not_allowed',
      detail: '[::ffff:7f00:1] is an ipv4-mapped loopback address.',
    });
    expect(await codeOf('https://[fd00:ec2::254]/')).toBe('address_not_allowed');
    expect(await codeOf('https://169.254.169.254/latest/meta-data/', true)).toBe('address_not_allowed');
    expect(await codeOf('https://93.184.215.14/')).toBe('ok');
    expect(await codeOf('https://[2606:4700:4700::1111]/')).toBe('ok');
    expect(await codeOf('http://127.0.0.1:3000/hook', true)).toBe('ok');
    expect(lookups).toEqual([]);
  });

  it('reads the IPv4 forms the URL parser normalises as the address they are', async () => {
    for (const raw of ['https://2130706433/', 'https://0x7f.1/', 'https://0177.0.0.1/', 'https://127.1/']) {
      expect(await check(raw)).toEqual({ ok: false, code: 'address_not_allowed', detail: '127.0.0.1 is a loopback address.' });
    }
    expect(lookups).toEqual([]);
  });

  it('refuses a name when any of its addresses is refused, naming the class', async () => {
    expect(await check('https://mixed.example.com/')).toEqual({
      ok: false,
      code: 'address_not_allowed',
      detail: 'mixed.example.com resolves to a private address.',
    });
    expect(await check('https://localhost:8443/')).toEqual({
      ok: false,
      code: 'address_not_allowed',
      detail: 'localhost resolves to a loopback address.',
    });
    expect(await check('https://metadata.example.com/')).toEqual({
      ok: false,
      code: 'address_not_allowed',
      detail: 'metadata.example.com resolves to a metadata address.',
    });
    expect(await codeOf('https://mapped.example.com/')).toBe('address_not_allowed');
    expect(await codeOf('https://metadata.example.com/', true)).toBe('address_not_allowed');
  });

  it('resolves localhost like any name, and allows it with private targets allowed', async () => {
    expect(await codeOf('http://localhost:3000/', true)).toBe('ok');
    expect(lookups).toEqual(['localhost']);
  });

  it('refuses a host that does not resolve or has no addresses', async () => {
    expect(await check('https://nowhere.example.com/')).toEqual({
      ok: false,
      code: 'unresolvable_host',
      detail: 'nowhere.example.com could not be resolved (ENOTFOUND).',
    });
    expect(await check('https://empty.example.com/')).toEqual({ ok: false, code: 'unresolvable_host', detail: 'empty.example.com has no addresses.' });
  });
});
