import { uuidv7 } from './uuid-v7.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuidv7', () => {
  it('is a version 7, RFC 9562 variant UUID', () => {
    for (let i = 0; i < 1000; i++) expect(uuidv7()).toMatch(V7);
  });

  it('starts with the time in milliseconds, so ids of later moments sort after earlier ones', () => {
    const at = Date.UTC(2026, 10, 24, 12, 0, 0, 123);
    const id = uuidv7(at);
    expect(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(at);
    expect(uuidv7(at + 1) > uuidv7(at)).toBe(true);
    expect(uuidv7(0)).toMatch(/^00000000-0000-7/);
  });

  it('differs in its random bits between ids of the same millisecond', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => uuidv7(1_700_000_000_000)));
    expect(ids.size).toBe(10_000);
  });
});
