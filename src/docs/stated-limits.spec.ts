import { readFileSync } from 'node:fs';
import { CONTRACT } from '../../test/support/contract.js';
import { loadConfig } from '../config/config.js';
import { DOC_FACTS } from './doc-facts.js';
import { DOC_PAGES } from './docs.pages.js';
import { PAGE_FILES } from './page-files.js';
import { KEY_LIFETIME_MS as IDEMPOTENCY_KEY_LIFETIME_MS } from '../leads/idempotency.service.js';
import { DIGEST_TABLE_MAX } from '../mail/eta-mail-templates.js';
import { CONFIRMATIONS_PER_DAY } from '../notifications/notification-recipients.service.js';
import { CONFIRMATION_LIFETIME_MS } from '../notifications/recipient-links.js';
import { TOKEN_LIFETIMES } from '../oauth/key-store.service.js';
import { ERROR_CATALOG, MAX_FIELD_ERRORS } from '../problem/error-catalog.js';
import { MAX_ANSWER_BYTES } from '../screening/captcha-verifier.js';
import { MAX_PIPELINED_REQUESTS } from '../server/connection-limits.js';
import { BODY_LIMIT_BYTES, CODED_WIRE_LIMIT_BYTES, HEADER_BLOCK_LIMIT_BYTES, HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from '../server/http-limits.js';
import { RESPONSE_BODY_KEPT } from '../webhooks/webhook-http.js';
import { ROTATION_GRACE_MS } from '../webhooks/webhooks.service.js';

/**
 * Limits written as text, held to the values the code uses: in the README and the contract (static documents), and in
 * the catalog's one description that states the idempotency window (the catalog cannot import the leads module; the
 * hints otherwise build their numbers from the constants). The docs pages quote theirs as `{{NAME}}` placeholders: the
 * list of those facts is checked here instead of their prose. Also the settings' defaults, wherever a text names one
 * beside its setting.
 */

type Json = Record<string, any>;

/** Every string of the contract (descriptions, summaries), one per line. */
function strings(node: unknown): string[] {
  if (typeof node === 'string') return [node];
  if (node && typeof node === 'object') return Object.values(node).flatMap(strings);
  return [];
}

const TEXTS: Record<string, string> = {
  README: readFileSync('README.md', 'utf8'),
  contract: strings(CONTRACT).join('\n'),
  'error catalog': Object.values(ERROR_CATALOG)
    .map((entry) => `${entry.hint}\n${entry.description}`)
    .join('\n'),
};

const kib = (bytes: number) => String(bytes / 1024);
const seconds = (ms: number) => String(ms / 1000);
const hours = (ms: number) => String(ms / 3_600_000);
const minutes = (s: number) => String(s / 60);

interface Statement {
  fact: string;
  in: string;
  /** Global; its capture groups are the numbers stated. */
  pattern: RegExp;
  values: string[];
}

// Words may wrap onto the next line: \s+ between them.
const STATEMENTS: Statement[] = [
  { fact: 'body limit', in: 'README', pattern: /reads\s+its body \(at most (\d+) KiB\)/g, values: [kib(BODY_LIMIT_BYTES)] },
  { fact: 'body limit', in: 'README', pattern: /bodies\s+over\s+(\d+) KiB\s+even\s+after\s+decompression/g, values: [kib(BODY_LIMIT_BYTES)] },
  { fact: 'body limit', in: 'README', pattern: /A\s+body\s+over\s+(\d+) KiB\s+is\s+refused/g, values: [kib(BODY_LIMIT_BYTES)] },
  { fact: 'body limit', in: 'README', pattern: /The\s+body\s+limit\s+is\s+(\d+) KiB,\s+so\s+that\s+a\s+lead/g, values: [kib(BODY_LIMIT_BYTES)] },
  {
    fact: 'body limit, decoded and on the wire',
    in: 'README',
    pattern: /\| body \| (\d+) KiB after decompression, (\d+) KiB on the wire/g,
    values: [kib(BODY_LIMIT_BYTES), kib(CODED_WIRE_LIMIT_BYTES)],
  },
  { fact: 'header block limit', in: 'README', pattern: /\| request line and headers \| (\d+) KiB \(Node's limit\)/g, values: [kib(HEADER_BLOCK_LIMIT_BYTES)] },
  {
    fact: 'headers and request timeouts',
    in: 'README',
    pattern: /headers\s+must\s+arrive\s+within\s+(\d+) s,\s+a\s+whole\s+request\s+within\s+(\d+) s/g,
    values: [seconds(HEADERS_TIMEOUT_MS), seconds(REQUEST_TIMEOUT_MS)],
  },
  {
    fact: 'headers and request timeouts',
    in: 'README',
    pattern: /\| headers, whole request \| (\d+) s, (\d+) s \|/g,
    values: [seconds(HEADERS_TIMEOUT_MS), seconds(REQUEST_TIMEOUT_MS)],
  },
  { fact: 'pipelined requests', in: 'README', pattern: /\| pipelined requests \| (\d+) waiting per connection/g, values: [String(MAX_PIPELINED_REQUESTS)] },
  { fact: 'field errors', in: 'README', pattern: /`errors\[\]`[^()]*\(at\s+most\s+(\d+)\)/g, values: [String(MAX_FIELD_ERRORS)] },
  { fact: 'idempotency window', in: 'README', pattern: /within\s+(\d+)\s+hours\s+replays/g, values: [hours(IDEMPOTENCY_KEY_LIFETIME_MS)] },
  { fact: 'siteverify answer limit', in: 'README', pattern: /reads\s+at\s+most\s+(\d+) KiB\s+of\s+its\s+answer/g, values: [kib(MAX_ANSWER_BYTES)] },
  { fact: 'access token lifetime', in: 'README', pattern: /a\s+(\d+)-minute\s+access\s+token/g, values: [minutes(TOKEN_LIFETIMES.access_token)] },
  { fact: 'access token lifetime', in: 'README', pattern: /`typ: at\+jwt`,\s+(\d+)\s+minutes/g, values: [minutes(TOKEN_LIFETIMES.access_token)] },
  { fact: 'assertion lifetime', in: 'README', pattern: /the\s+registration\s+id,\s+(\d+)\s+hour,/g, values: [hours(TOKEN_LIFETIMES.assertion * 1000)] },
  {
    fact: 'assertion and access token lifetimes together',
    in: 'README',
    pattern: /last\s+token\s+expires\s+\((\d+)\s+minutes\s+at\s+most\)/g,
    values: [minutes(TOKEN_LIFETIMES.assertion + TOKEN_LIFETIMES.access_token)],
  },

  { fact: 'body limit', in: 'contract', pattern: /JSON\s+request\s+bodies:\s+at\s+most\s+(\d+) KiB/g, values: [kib(BODY_LIMIT_BYTES)] },
  { fact: 'body limit', in: 'contract', pattern: /body\s+exceeds\s+(\d+) KiB/g, values: [kib(BODY_LIMIT_BYTES)] },
  { fact: 'body limit', in: 'contract', pattern: /`Content-Type: application\/json`,\s+at\s+most\s+(\d+) KiB/g, values: [kib(BODY_LIMIT_BYTES)] },
  { fact: 'body limit', in: 'contract', pattern: /\bbody\s+over\s+(\d+) KiB/gi, values: [kib(BODY_LIMIT_BYTES)] },
  { fact: 'body limit', in: 'contract', pattern: /body\s+limit\s+is\s+the\s+API's\s+\((\d+) KiB/g, values: [kib(BODY_LIMIT_BYTES)] },
  { fact: 'body limit', in: 'contract', pattern: /larger\s+than\s+(\d+) bytes/g, values: [String(BODY_LIMIT_BYTES)] },
  { fact: 'body limit', in: 'contract', pattern: /under\s+(\d+) KiB\./g, values: [kib(BODY_LIMIT_BYTES)] },
  { fact: 'header block limit', in: 'contract', pattern: /request\s+line\s+and\s+headers\s+exceed\s+(\d+) KiB/g, values: [kib(HEADER_BLOCK_LIMIT_BYTES)] },
  {
    fact: 'headers and request timeouts',
    in: 'contract',
    pattern: /did\s+not\s+arrive\s+within\s+(\d+) s,\s+or\s+the\s+whole\s+request\s+within\s+(\d+) s/g,
    values: [seconds(HEADERS_TIMEOUT_MS), seconds(REQUEST_TIMEOUT_MS)],
  },
  { fact: 'field errors', in: 'contract', pattern: /`?errors(?:\[\]`)?[^()\n]*\(?at\s+most\s+(\d+)/g, values: [String(MAX_FIELD_ERRORS)] },
  {
    fact: 'idempotency window',
    in: 'contract',
    pattern: /(?:kept\s+for|safe\s+for|within)\s+(\d+)\s+h(?:ours)?\b/g,
    values: [hours(IDEMPOTENCY_KEY_LIFETIME_MS)],
  },
  { fact: 'access token lifetime', in: 'contract', pattern: /RFC\s+9068\s+JWT,\s+valid\s+(\d+)\s+minutes/g, values: [minutes(TOKEN_LIFETIMES.access_token)] },
  { fact: 'assertion lifetime', in: 'contract', pattern: /a\s+JWT,\s+valid\s+(\d+)\s+hour/g, values: [hours(TOKEN_LIFETIMES.assertion * 1000)] },

  { fact: 'idempotency window', in: 'error catalog', pattern: /in\s+the\s+last\s+(\d+)\s+hours/g, values: [hours(IDEMPOTENCY_KEY_LIFETIME_MS)] },
];

/**
 * A setting beside its default: "`MAX_CONNECTIONS` (4096)", "`WRITE_TIMEOUT` (30 s)", "`MAX_ANSWER_BYTES` (default 1 MiB",
 * "`MAX_HEADERS` allows (100 by default)", "5 s (`KEEP_ALIVE_TIMEOUT`)".
 */
const SETTING_DEFAULT =
  /`([A-Z][A-Z0-9_]+)`\s+(?:allows\s+)?\((?:default\s+)?(\d+)( s| KiB| MiB)?(?:\s+by\s+default)?|()(?<!\d)(\d+)( s)? \(`([A-Z][A-Z0-9_]+)`\)/g;
const UNIT_FACTORS: Record<string, number> = { ' KiB': 1024, ' MiB': 1024 * 1024, ' s': 1, '': 1 };

/** Units whose every mention in a text must be one of the statements above, so that a new one gets its check. */
const UNITS = /\b\d+ (?:KiB|MiB)\b/g;

describe('limits stated as text', () => {
  it.each(STATEMENTS.map((statement) => [`${statement.in}: ${statement.fact} (${statement.pattern.source})`, statement]))('%s', (_name, statement) => {
    const stated = [...TEXTS[statement.in].matchAll(statement.pattern)].map((match) => match.slice(1));
    expect(stated.length).toBeGreaterThan(0);
    for (const values of stated) expect(values).toEqual(statement.values);
  });

  it.each(['README', 'contract'])('%s: every size in KiB or MiB is checked, by a statement above or as a setting', (source) => {
    const text = TEXTS[source];
    const covered = [...STATEMENTS.filter((statement) => statement.in === source).map((statement) => statement.pattern), SETTING_DEFAULT]
      .flatMap((pattern) => [...text.matchAll(pattern)])
      .map((match) => [match.index!, match.index! + match[0].length]);
    const unchecked = [...text.matchAll(UNITS)]
      .filter((match) => !covered.some(([start, end]) => match.index! >= start && match.index! < end))
      .map((match) => match[0]);
    expect(unchecked).toEqual([]);
  });
});

describe('facts the docs pages quote ({{NAME}} in src/docs/pages/*.md, filled from src/docs/doc-facts.ts)', () => {
  it('the placeholder list is these facts, each written from its constant', () => {
    expect(DOC_FACTS).toEqual({
      ACCESS_TOKEN_LIFETIME: `${minutes(TOKEN_LIFETIMES.access_token)} minutes`,
      ACCESS_TOKEN_LIFETIME_SECONDS: String(TOKEN_LIFETIMES.access_token),
      ASSERTION_LIFETIME: `${hours(TOKEN_LIFETIMES.assertion * 1000)} hour`,
      BODY_LIMIT: `${kib(BODY_LIMIT_BYTES)} KiB`,
      IDEMPOTENCY_KEY_LIFETIME: `${hours(IDEMPOTENCY_KEY_LIFETIME_MS)} hours`,
      NOTIFICATION_CONFIRMATION_DAYS: String(CONFIRMATION_LIFETIME_MS / 86_400_000),
      NOTIFICATION_CONFIRMATIONS_PER_DAY: String(CONFIRMATIONS_PER_DAY),
      DIGEST_LEADS: String(DIGEST_TABLE_MAX),
      WEBHOOK_RESPONSE_KEPT: `${kib(RESPONSE_BODY_KEPT)} KiB`,
      WEBHOOK_SECRET_ROTATION_GRACE: `${hours(ROTATION_GRACE_MS)} hours`,
    });
  });

  it('no page writes out a size in KiB or MiB: each is a placeholder', () => {
    const written = Object.entries(PAGE_FILES).flatMap(([name, text]) => [...text.matchAll(UNITS)].map((match) => `${name}: ${match[0]}`));
    expect(written).toEqual([]);
  });

  it.each(Object.entries(DOC_FACTS))('no page writes out %s (%s) where the placeholder belongs', (name, value) => {
    // The words each fact goes with in the pages, so that a page that wrote the number out instead fails here.
    const phrases: Record<string, RegExp> = {
      ACCESS_TOKEN_LIFETIME: new RegExp(`valid\\s+(?:for\\s+)?${value}`, 'g'),
      ACCESS_TOKEN_LIFETIME_SECONDS: new RegExp(`"expires_in":\\s*${value}\\b`, 'g'),
      ASSERTION_LIFETIME: new RegExp(`valid\\s+for\\s+${value}`, 'g'),
      BODY_LIMIT: new RegExp(`\\b${value}`, 'g'),
      IDEMPOTENCY_KEY_LIFETIME: new RegExp(
        `(?:Idempotency keys \\| |within\\s+|rest\\s+of\\s+their\\s+|idempotency\\s+key\\s+for\\s+|rerun\\s+after\\s+)${value}`,
        'g',
      ),
      NOTIFICATION_CONFIRMATION_DAYS: new RegExp(`valid\\s+for\\s+${value}\\s+days`, 'g'),
      NOTIFICATION_CONFIRMATIONS_PER_DAY: new RegExp(`at\\s+most\\s+${value}\\s+confirmation`, 'g'),
      DIGEST_LEADS: new RegExp(`past\\s+${value}\\b`, 'g'),
      WEBHOOK_RESPONSE_KEPT: new RegExp(`\\b${value}`, 'g'),
      WEBHOOK_SECRET_ROTATION_GRACE: new RegExp(`(?:For|for)\\s+${value}\\s+after|beside\\s+the\\s+new\\s+one\\s+for\\s+${value}`, 'g'),
    };
    const sources = Object.values(PAGE_FILES).join('\n');
    const served = DOC_PAGES.map((page) => page.markdown).join('\n');
    // Found where the placeholder is once filled in (the phrase is right), and nowhere in the sources.
    expect([served.match(phrases[name])?.length, sources.match(phrases[name])]).toEqual([sources.split(`{{${name}}}`).length - 1, null]);
  });
});

describe('setting defaults stated as text', () => {
  const defaults = loadConfig({});
  /** Setting a variable to the default a text states must change nothing. */
  const statesTheDefault = (name: string, value: string) => {
    expect([name, value, loadConfig({ [name]: value })]).toEqual([name, value, defaults]);
  };

  it('README: the configuration table', () => {
    const rows = [...TEXTS.README.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \| `([^`$]+)` \|/gm)].filter(([, , value]) => !/^[A-Z][A-Z0-9_]+$/.test(value));
    expect(rows.length).toBeGreaterThan(10);
    for (const [, name, value] of rows) statesTheDefault(name, value);
  });

  it.each(['README', 'contract'])('%s: defaults named beside their setting', (source) => {
    const stated = [...TEXTS[source].matchAll(SETTING_DEFAULT)].map((match) => {
      const [name, value, unit] = match[1] ? [match[1], match[2], match[3] ?? ''] : [match[7], match[5], match[6] ?? ''];
      return [name, String(Number(value) * UNIT_FACTORS[unit])];
    });
    expect(stated.length).toBeGreaterThan(source === 'README' ? 4 : 1);
    for (const [name, value] of stated) statesTheDefault(name, value);
  });

  it('README: the identity ceiling with the default quotas', () => {
    const perMinute = (quota: { limit: number; windowSeconds: number }) => (quota.limit * 60) / quota.windowSeconds;
    const stated = /\((\d{1,9}) a minute with the defaults\)/.exec(TEXTS.README)?.[1];
    expect(Number(stated)).toBe(perMinute(defaults.rateLimitAnonymous) + perMinute(defaults.rateLimitAgentPerAddress));
  });

  it('contract: the cap of errors[] in the Problem schema', () => {
    expect((CONTRACT as Json).components.schemas.Problem.properties.errors.maxItems).toBe(MAX_FIELD_ERRORS);
  });
});
