import { codePointLength, FORBIDDEN_CHARACTER, VISIBLE_CHARACTER } from './lead-rules.js';

/**
 * Attribution: where a lead was filled in and which campaign brought the visitor (HubSpot's `context.pageUri`, RD
 * Station's traffic source). The CLI (which bundles this file) reads CSV columns of these names into `context`.
 */
export const CONTEXT_MEMBERS = [
  'page_url',
  'page_title',
  'referrer',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
  'gclid',
  'fbclid',
] as const;

export type ContextMember = (typeof CONTEXT_MEMBERS)[number];
export type LeadContext = Partial<Record<ContextMember, string>>;

/** The members that hold a URL: http(s) only, stored without query, fragment and credentials, which carry tokens and addresses. */
export const CONTEXT_URL_MEMBERS: ReadonlySet<ContextMember> = new Set(['page_url', 'referrer']);
export const CONTEXT_URL_MAX = 2048;
export const CONTEXT_TEXT_MAX = 256;

export type ContextFailure = 'invalid_type' | 'invalid_characters' | 'too_short' | 'too_long' | 'invalid_url' | 'scheme_not_allowed';

/**
 * A context member's stored value, or why it has none. Bounds are checked on the trimmed text before a URL is parsed, so
 * the parser only ever sees at most CONTEXT_URL_MAX code points, and again on the URL as stored: percent-encoding (up to
 * 12 characters for one code point) and Punycode make it longer than the text sent.
 */
export function contextValue(member: ContextMember, value: unknown): { value: string } | { failure: ContextFailure } {
  if (typeof value !== 'string') return { failure: 'invalid_type' };
  const text = value.trim();
  if (FORBIDDEN_CHARACTER.test(text)) return { failure: 'invalid_characters' };
  if (text === '' || !VISIBLE_CHARACTER.test(text)) return { failure: 'too_short' };
  const url = CONTEXT_URL_MEMBERS.has(member);
  const max = url ? CONTEXT_URL_MAX : CONTEXT_TEXT_MAX;
  // A string has at least as many UTF-16 units as code points: only a longer one needs counting.
  if (text.length > max && codePointLength(text) > max) return { failure: 'too_long' };
  if (!url) return { value: text.normalize('NFC') };
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return { failure: 'invalid_url' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { failure: 'scheme_not_allowed' };
  const stored = `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  return stored.length > CONTEXT_URL_MAX ? { failure: 'too_long' } : { value: stored };
}
