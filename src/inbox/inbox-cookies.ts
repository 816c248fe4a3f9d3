import type { Request, Response } from 'express';

/** The inbox's cookies, by their name without prefix. */
export type CookieName = 'inbox_session' | 'inbox_csrf' | 'inbox_lang' | 'inbox_attempt' | 'inbox_oidc';

/**
 * Every cookie the inbox sets is HttpOnly (no script reads any: the CSRF token travels in the page) and SameSite=Lax;
 * over https also Secure, with the __Host- prefix (Path=/, no Domain), so that no other host of the site can set it.
 */
export class InboxCookies {
  constructor(private readonly secure: boolean) {}

  name(base: CookieName): string {
    return this.secure ? `__Host-${base}` : base;
  }

  /** `maxAgeSeconds` undefined: a browser-session cookie. */
  set(res: Response, base: CookieName, value: string, maxAgeSeconds?: number): void {
    const attributes = [
      'Path=/',
      'HttpOnly',
      'SameSite=Lax',
      ...(this.secure ? ['Secure'] : []),
      ...(maxAgeSeconds === undefined ? [] : [`Max-Age=${maxAgeSeconds}`]),
    ];
    res.append('Set-Cookie', `${this.name(base)}=${value}; ${attributes.join('; ')}`);
  }

  clear(res: Response, base: CookieName): void {
    this.set(res, base, '', 0);
  }

  /** The cookie's value, if the request carries it once (a repeated one is ignored: one may be planted). */
  read(req: Request, base: CookieName): string | undefined {
    const name = this.name(base);
    const values = (req.headers.cookie ?? '')
      .split(';')
      .map((pair) => pair.trim())
      .filter((pair) => pair.startsWith(`${name}=`))
      .map((pair) => pair.slice(name.length + 1));
    return values.length === 1 && /^[\w.-]{1,200}$/.test(values[0]) ? values[0] : undefined;
  }
}
