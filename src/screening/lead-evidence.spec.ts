import type { Request } from 'express';
import { clientIp } from '../request/client-ip.js';
import { captchaEvidenceOf, evidenceOf } from './lead-evidence.js';

const request = (ip: string | undefined, remoteAddress: string, headers: Record<string, string> = {}) =>
  ({ ip, socket: { remoteAddress }, headers }) as unknown as Request;

describe('evidenceOf', () => {
  it('reads the captcha token, the form token and the trap field; an empty token is none, an empty trap is a trap left alone', () => {
    expect(evidenceOf(request('203.0.113.7', '10.0.0.1', { 'captcha-token': 'c', 'form-token': '', 'form-trap': '' }))).toEqual({
      address: '203.0.113.7',
      remoteIp: '203.0.113.7',
      captchaToken: 'c',
      formToken: undefined,
      formTrap: '',
    });
  });

  it('reads Express’s req.ip once for the rate limiter’s client address and for the evidence', () => {
    let reads = 0;
    const req = { socket: { remoteAddress: '10.0.0.1' }, headers: {} } as unknown as Request;
    Object.defineProperty(req, 'ip', { get: () => (reads++, '203.0.113.7') });
    expect(clientIp(req)).toBe('203.0.113.7');
    expect(evidenceOf(req)).toMatchObject({ address: '203.0.113.7', remoteIp: '203.0.113.7' });
    expect(reads).toBe(1);
  });

  it('sends siteverify only a plain address: a forwarded entry that is not one gives way to the socket’s, as for rate limits', () => {
    expect(captchaEvidenceOf(request('not-an-address', '198.51.100.4')).remoteIp).toBe('198.51.100.4');
    expect(captchaEvidenceOf(request('fe80::1%eth0', '::ffff:198.51.100.5')).remoteIp).toBe('198.51.100.5');
    expect(captchaEvidenceOf(request('2001:db8:1:2::7', '10.0.0.1'))).toEqual({
      address: '2001:db8:1:2::/64',
      remoteIp: '2001:db8:1:2::7',
      captchaToken: undefined,
    });
  });
});
