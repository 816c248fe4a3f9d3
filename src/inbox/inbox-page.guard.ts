import { applyDecorators, CanActivate, createParamDecorator, ExecutionContext, Inject, Injectable, SetMetadata, UseGuards } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { inboxFormOf } from '../body/request-body.js';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { AppError } from '../problem/app-error.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { inboxStateOf, InboxSessions, PersonPrincipal } from './inbox-sessions.service.js';

/** What an inbox route requires: a signed-in person holding these scopes (none: any person), or nobody (sign-in). */
export type PageRule = { signedIn: false } | { signedIn: true; scopes: readonly string[] };

const PAGE_RULE = Symbol('inbox page');

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/**
 * An inbox page or action for a signed-in person holding every scope given (the same scopes as the API's; a role
 * grants them, src/people/roles.ts): without a session a browser is sent to sign in (303), without a scope it gets the
 * 403 page. Every POST must carry the form's CSRF token. Spends the operator rate-limit tier, by user id.
 */
export const InboxPage = (...scopes: string[]) =>
  applyDecorators(SetMetadata(PAGE_RULE, { signedIn: true, scopes } satisfies PageRule), UseGuards(InboxPageGuard), RateLimit('api'));

/** An inbox page for anyone (the sign-in pages): CSRF on POST all the same, the anonymous rate-limit tier. */
export const PublicInboxPage = () =>
  applyDecorators(SetMetadata(PAGE_RULE, { signedIn: false } satisfies PageRule), UseGuards(InboxPageGuard), RateLimit('api'));

export function pageRule(reflector: Reflector, context: Pick<ExecutionContext, 'getHandler' | 'getClass'>): PageRule | undefined {
  return reflector.getAllAndOverride<PageRule | undefined>(PAGE_RULE, [context.getHandler(), context.getClass()]);
}

/**
 * What the contract states for an inbox route (its `security`): the session cookie with the scopes its role must grant,
 * or none for the sign-in pages; undefined for a route that is no inbox page. test/route-contract.e2e-spec.ts holds them.
 */
export function inboxSecurity(rule: PageRule | undefined): Record<string, string[]>[] | undefined {
  if (!rule) return undefined;
  return rule.signedIn ? [{ inboxSession: [...rule.scopes] }] : [];
}

/** The signed-in person of an @InboxPage route. */
export const CurrentPerson = createParamDecorator((_data: unknown, ctx: ExecutionContext): PersonPrincipal => {
  const person = inboxStateOf(ctx.switchToHttp().getRequest<Request>()).person;
  if (!person) throw new Error('@CurrentPerson() is for @InboxPage() routes');
  return person;
});

/** The fields of the posted form (URLSearchParams: `form.get('q')`, `form.getAll('id')`), already CSRF-checked. */
export const InboxForm = createParamDecorator((_data: unknown, ctx: ExecutionContext): URLSearchParams =>
  inboxFormOf(ctx.switchToHttp().getRequest<Request>()),
);

@Injectable()
export class InboxPageGuard implements CanActivate {
  private readonly origin: string;

  constructor(
    private readonly reflector: Reflector,
    private readonly sessions: InboxSessions,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.origin = new URL(config.publicBaseUrl).origin;
  }

  canActivate(context: ExecutionContext): boolean {
    const rule = pageRule(this.reflector, context);
    if (!rule) return true;
    const req = context.switchToHttp().getRequest<Request>();
    const person = inboxStateOf(req).person;
    // Without a session nothing can change: signing in comes first (its form then carries a token of its own).
    if (rule.signedIn && !person) throw new AppError('inbox_sign_in_required', 'This inbox page needs a signed-in person.');
    if (!SAFE_METHODS.has(req.method)) this.checkCsrf(req);
    if (!rule.signedIn || !person) return true;
    const missing = rule.scopes.filter((scope) => !person.scopes.includes(scope));
    if (missing.length) throw new AppError('insufficient_scope', `The role ${person.role} does not grant ${missing.join(' ')}, which this page needs.`);
    return true;
  }

  /**
   * The token of the request's session (or pre-sign-in cookie), from the form's `_csrf` or htmx's X-CSRF-Token header;
   * and a browser's Origin, when sent, must be ours. SameSite=Lax already keeps the cookies off cross-site posts.
   */
  private checkCsrf(req: Request): void {
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== this.origin) throw new AppError('csrf_token_invalid', 'The form was posted from a page of another origin.');
    const header = req.headers['x-csrf-token'];
    const token = typeof header === 'string' ? header : (inboxFormOf(req).get('_csrf') ?? undefined);
    if (!this.sessions.csrfValid(req, token)) throw new AppError('csrf_token_invalid', 'The form token is missing or does not belong to this session.');
  }
}
