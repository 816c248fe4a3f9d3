import type { Response } from 'supertest';

/** The PUBLIC_BASE_URL of the in-process test service (startTestApp). */
const BASE = 'http://leads.test';

/** An RFC 9457 answer with this status and catalog code, its type naming the code's entry in /docs/errors. */
export function expectProblem(res: Response, status: number, code: string): void {
  expect([res.status, res.body.code]).toEqual([status, code]);
  expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  expect(res.body).toMatchObject({ status, type: `${BASE}/docs/errors#${code}` });
}
