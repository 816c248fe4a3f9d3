/** Where the inbox goes when no return path is given, or the one given is refused. */
export const INBOX_HOME = '/inbox/leads';

/**
 * A return path the sign-in may redirect to: a path of this service's inbox, relative and same-origin. Refused (home
 * instead): absolute and scheme-relative URLs (`//evil`, `/\evil`, which browsers read as `//evil`), control
 * characters, encoded slashes or backslashes that a later decoding could turn into either, and anything outside /inbox.
 */
export function safeReturnPath(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length > 2000) return INBOX_HOME;
  if (!raw.startsWith('/') || raw.startsWith('//') || /[\\\p{Cc}]/u.test(raw) || /%(2f|5c|0[0-9a-f]|1[0-9a-f]|7f)/i.test(raw)) {
    return INBOX_HOME;
  }
  let url: URL;
  try {
    url = new URL(raw, 'http://inbox.invalid');
  } catch {
    return INBOX_HOME;
  }
  if (url.origin !== 'http://inbox.invalid' || !(url.pathname === '/inbox' || url.pathname.startsWith('/inbox/'))) return INBOX_HOME;
  return `${url.pathname}${url.search}`;
}
