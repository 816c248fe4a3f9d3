import { INBOX_HOME, safeReturnPath } from './return-path.js';

describe('safeReturnPath', () => {
  it.each([
    ['/inbox/leads', '/inbox/leads'],
    ['/inbox/leads?q=jo%C3%A3o&verdict=held', '/inbox/leads?q=jo%C3%A3o&verdict=held'],
    ['/inbox', '/inbox'],
    ['/inbox/settings/people', '/inbox/settings/people'],
  ])('keeps the inbox path %s', (raw, expected) => {
    expect(safeReturnPath(raw)).toBe(expected);
  });

  it.each([
    undefined,
    '',
    ['/inbox/leads'],
    'https://evil.example/inbox/leads',
    '//evil.example/inbox',
    '/\\evil.example/inbox',
    '\\\\evil.example',
    '/%2F%2Fevil.example',
    '/inbox/%2e%2e/%2fevil',
    '/inbox/..%2f..%2fapi',
    '/%5Cevil.example',
    '/inbox\t/leads',
    '/inbox/\nleads',
    'javascript:alert(1)',
    '/api/v1/leads',
    '/inbox/../api/v1/leads',
    '/inboxes',
    `/inbox/${'a'.repeat(2001)}`,
  ])('sends %p home instead', (raw) => {
    expect(safeReturnPath(raw)).toBe(INBOX_HOME);
  });
});
