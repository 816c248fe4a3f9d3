import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Principal } from '../auth/principal.js';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { scopesOf } from '../people/roles.js';
import { SecretBox } from '../secrets/secret-box.js';
import { InboxCookies } from './inbox-cookies.js';
import { SessionsStore } from '../people/sessions.store.js';

/** A session's last use is written at most this often: not one write per page. */
const TOUCH_EVERY_MS = 60_000;

export type PersonPrincipal = Extract<Principal, { kind: 'person' }>;

/** What the inbox knows of a request once its session cookie is read (InboxSessionMiddleware). */
export interface InboxState {
  /** The SHA-256 of the session id, when the request carries a live session. */
  sessionHash?: string;
  person?: PersonPrincipal;
  /** Before sign-in: the CSRF cookie's value, once read or made for this request. */
  csrfSeed?: string;
}

const STATE = Symbol('inbox state');
type RequestWithState = Request & { [STATE]?: InboxState; principal?: Principal };

export function inboxStateOf(req: Request): InboxState {
  return ((req as RequestWithState)[STATE] ??= {});
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const randomId = () => randomBytes(32).toString('base64url');

/**
 * Sessions of the inbox (issue 35): a random id in a cookie, kept in the database as its SHA-256 so that every
 * instance knows it and a copy of the table opens none. A new id at every sign-in (no fixation); ended by the idle and
 * absolute timeouts, by sign-out, and by removing the person. CSRF tokens are derived from the session (or, before
 * sign-in, from a random HttpOnly cookie) with the service key, so nothing more is stored.
 */
@Injectable()
export class InboxSessions {
  readonly cookies: InboxCookies;
  private readonly idleMs: number;
  private readonly lifetimeMs: number;

  constructor(
    private readonly store: SessionsStore,
    private readonly box: SecretBox,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.cookies = new InboxCookies(config.publicBaseUrl.startsWith('https:'));
    this.idleMs = config.inbox.idleTimeoutMs;
    this.lifetimeMs = config.inbox.sessionLifetimeMs;
  }

  /** Reads the session cookie into the request's state and principal; an ended session is removed and its cookie cleared. */
  async resolve(req: Request, res: Response, now = Date.now()): Promise<void> {
    const state: InboxState = {};
    (req as RequestWithState)[STATE] = state;
    const id = this.cookies.read(req, 'inbox_session');
    if (!id) return;
    const hash = sha256(id);
    const session = await this.store.find(hash);
    if (!session || now - session.lastSeenAt >= this.idleMs || now >= session.expiresAt) {
      if (session) await this.store.remove(hash);
      this.cookies.clear(res, 'inbox_session');
      return;
    }
    if (now - session.lastSeenAt >= TOUCH_EVERY_MS) await this.store.touch(hash, now);
    state.sessionHash = hash;
    state.person = Object.freeze({ kind: 'person', userId: session.personId, role: session.role, scopes: scopesOf(session.role) });
    (req as RequestWithState).principal = state.person;
  }

  personOf(req: Request): PersonPrincipal | undefined {
    return inboxStateOf(req).person;
  }

  /** Starts a session for a person: a fresh id (any previous session cookie of this browser is replaced, and ended). */
  async start(req: Request, res: Response, personId: string, now = Date.now()): Promise<void> {
    const previous = inboxStateOf(req).sessionHash;
    if (previous) await this.store.remove(previous);
    const id = randomId();
    await this.store.insert(sha256(id), personId, now, now + this.lifetimeMs);
    this.cookies.set(res, 'inbox_session', id, Math.floor(this.lifetimeMs / 1000));
  }

  async end(req: Request, res: Response): Promise<void> {
    const hash = inboxStateOf(req).sessionHash;
    if (hash) await this.store.remove(hash);
    this.cookies.clear(res, 'inbox_session');
  }

  /**
   * The CSRF token of this request's forms: bound to the session, or before sign-in to a random cookie set now if the
   * browser has none (double submit, the cookie HttpOnly so no script of any site reads it).
   */
  csrfToken(req: Request, res: Response): string {
    const hash = inboxStateOf(req).sessionHash;
    if (hash) return this.box.mac(hash, 'inbox-csrf:session').toString('base64url');
    const state = inboxStateOf(req);
    let seed = state.csrfSeed ?? this.cookies.read(req, 'inbox_csrf');
    if (!seed) {
      seed = randomId();
      this.cookies.set(res, 'inbox_csrf', seed);
    }
    state.csrfSeed = seed;
    return this.box.mac(seed, 'inbox-csrf:anonymous').toString('base64url');
  }

  /** Does the request carry the token its forms were given? Compared in constant time. */
  csrfValid(req: Request, token: string | undefined): boolean {
    if (!token) return false;
    const hash = inboxStateOf(req).sessionHash;
    const seed = hash ? undefined : this.cookies.read(req, 'inbox_csrf');
    if (!hash && !seed) return false;
    const expected = hash ? this.box.mac(hash, 'inbox-csrf:session') : this.box.mac(seed!, 'inbox-csrf:anonymous');
    const given = Buffer.from(token, 'base64url');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /** Ends sessions past either timeout (run from time to time; a live request ends its own on sight). */
  purge(now = Date.now()): Promise<number> {
    return this.store.purge(now - this.idleMs, now, 1000);
  }
}
