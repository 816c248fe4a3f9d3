import type { Request } from 'express';
import { leadChannelOf } from './lead-channel.js';

const channelOf = (headers: Record<string, string>) => leadChannelOf({ headers } as unknown as Request);

/** The headers each client really sends with a JSON POST (issue 33). */
describe('leadChannelOf', () => {
  it('labels Node’s fetch (undici: Sec-Fetch-Mode: cors, no Origin, no Sec-Fetch-Site) api', () => {
    expect(
      channelOf({ 'content-type': 'application/json', accept: '*/*', 'user-agent': 'node', 'sec-fetch-mode': 'cors', 'accept-encoding': 'gzip, deflate' }),
    ).toBe('api');
  });

  it('labels curl and Python’s requests api', () => {
    expect(channelOf({ 'user-agent': 'curl/8.14.1', accept: '*/*', 'content-type': 'application/json' })).toBe('api');
    expect(channelOf({ 'user-agent': 'python-requests/2.32.3', accept: '*/*', connection: 'keep-alive', 'content-type': 'application/json' })).toBe('api');
  });

  it('labels a browser page form: a cross-origin fetch sends Origin and Sec-Fetch-Site; a same-origin one at least Sec-Fetch-Site', () => {
    expect(
      channelOf({
        origin: 'https://www.cliente.com.br',
        'sec-fetch-site': 'cross-site',
        'sec-fetch-mode': 'cors',
        'sec-fetch-dest': 'empty',
        'user-agent': 'Mozilla/5.0',
      }),
    ).toBe('form');
    expect(channelOf({ 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' })).toBe('form');
    expect(channelOf({ origin: 'null' })).toBe('form');
  });

  it('labels the command-line client cli, whatever else it sends', () => {
    expect(channelOf({ 'user-agent': 'leads-cli/1.4.0 (node v24.21.0)', 'sec-fetch-mode': 'cors' })).toBe('cli');
  });
});
