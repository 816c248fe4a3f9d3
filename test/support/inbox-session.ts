import { createHash, randomBytes } from 'node:crypto';
import type { Response, Test } from 'supertest';
import { PeopleService } from '../../src/people/people.service.js';
import type { Role } from '../../src/people/roles.js';
import { SessionsStore } from '../../src/people/sessions.store.js';
import type { TestApp } from './test-app.js';

/**
 * A person of the inbox signed in without the e-mail code: a session row written directly, as the sign-in would write
 * it. For page suites that test what a signed-in person sees; the sign-in itself is tested in test/inbox-*.e2e-spec.ts.
 * Test support only: nothing in src/ can make a session without a code.
 */
export interface InboxPerson {
  userId: string;
  email: string;
  role: Role;
  /** The Cookie header of this person's browser. */
  cookie: string;
  /** The CSRF token of this session, as its pages carry it. */
  csrf: string;
  /** A request with this person's cookie; more headers may be `.set()` on it. */
  get(path: string): Test;
  /** Posts a form (fields may repeat: pass arrays), with the session's CSRF token unless `_csrf` is given. */
  post(path: string, fields?: Record<string, string | string[]>, headers?: Record<string, string>): Test;
}

let people = 0;

/** Adds a person (a new address unless given) and signs them in. */
export async function signedInAs(t: TestApp, role: Role, email = `person${++people}.${role}@empresa.example`): Promise<InboxPerson> {
  const added = await t.app.get(PeopleService).add(email, role);
  if (!added.added) throw new Error(`could not add ${email}: ${added.reason}`);
  return sessionFor(t, added.person.id, email, role);
}

/** A new session for an existing person. */
export async function sessionFor(t: TestApp, userId: string, email: string, role: Role): Promise<InboxPerson> {
  const id = randomBytes(32).toString('base64url');
  const now = Date.now();
  await t.app.get(SessionsStore).insert(createHash('sha256').update(id).digest('hex'), userId, now, now + t.config.inbox.sessionLifetimeMs);
  const cookie = `inbox_session=${id}`;
  const page = await t.http.get('/inbox/sign-in').set('Cookie', cookie);
  const csrf = csrfOf(page.text);
  return {
    userId,
    email,
    role,
    cookie,
    csrf,
    get: (path) => t.http.get(path).set('Cookie', cookie),
    post: (path, fields = {}, headers = {}) =>
      t.http
        .post(path)
        .set('Cookie', cookie)
        .set(headers)
        .type('form')
        .send(formBody({ _csrf: csrf, ...fields })),
  };
}

/** The CSRF token a page carries in its <meta name="csrf-token">. */
export function csrfOf(html: string): string {
  const token = /<meta name="csrf-token" content="([^"]+)">/.exec(html)?.[1];
  if (!token) throw new Error('the page has no csrf-token meta tag');
  return token;
}

/** application/x-www-form-urlencoded, a field repeated once per value of an array. */
export function formBody(fields: Record<string, string | string[]>): string {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) for (const one of [value].flat()) body.append(name, one);
  return body.toString();
}

/** The code a verification mail carries: the first six-digit number of its text part (as the issue promises). */
export function codeOf(text: string): string {
  const code = /(?<!\d)\d{6}(?!\d)/.exec(text)?.[0];
  if (!code) throw new Error('the mail has no six-digit code');
  return code;
}

/** A browser's cookie jar, enough for the inbox: every Set-Cookie taken in, Max-Age=0 removes. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  take(res: Response): this {
    for (const line of [res.headers['set-cookie'] ?? []].flat()) {
      const [pair, ...attributes] = line.split(';');
      const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      if (attributes.some((a) => a.trim() === 'Max-Age=0')) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return this;
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }

  set(name: string, value: string): void {
    this.cookies.set(name, value);
  }

  get header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}
