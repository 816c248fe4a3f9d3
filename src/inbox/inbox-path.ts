/**
 * Whether a request path is the inbox's: express matches routes case-insensitively, so /Inbox/leads reaches the inbox's
 * handlers and must get its rules too (error pages, forms, headers, no CORS).
 */
export function isInboxPath(path: string): boolean {
  const lower = path.toLowerCase();
  return lower === '/inbox' || lower.startsWith('/inbox/');
}
