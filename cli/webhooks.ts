// `leads webhooks …`: the webhook endpoints of the service (docs/decisions/0027-webhooks-outbox.md), managed with an
// operator login that has webhooks:manage. Secrets are printed once, never logged and never stored.
import { Parsed, UsageError, allowOnly } from './args.js';
import { CliError, EXIT, HttpResponse, RequestOptions } from './http.js';
import { Column, formatRows } from './list.js';
import { OperatorLogin, ensureScope, notLoggedIn } from './login.js';

export const WEBHOOKS_SCOPE = 'webhooks:manage';

export const WEBHOOKS_HELP = `Usage: leads webhooks <command> [options]

Webhook endpoints: the service signs each lead.received (and webhook.test) to Standard Webhooks 1.0 and retries a
failed delivery for more than a day. Needs an operator login (leads login) whose client has ${WEBHOOKS_SCOPE}.
On a terminal the answers are shown as text and tables; otherwise (or with --json) as the service's JSON.

Commands:
  add <url> [--event <type>]… [--description <text>]
                          create an endpoint (POST /api/v1/webhooks); prints its signing secret, shown only
                          once. --event may be repeated (or comma-separated); without it, the service's default
  list                    the endpoints, oldest first: id, status, url, events, disabled_reason
  test <id> [--wait <seconds>]
                          send a signed webhook.test to the endpoint, then wait (default 10 s, 0 not to wait) for
                          its first attempt and print the outcome. Exit 0 when it succeeded, 6 when it failed,
                          7 when no attempt was made in time
  deliveries <id> [--limit N] [--cursor <cursor>] [--all] [--message <msg_id>]
                          the log of attempts, newest first; --all follows next_cursor to the end
  rotate <id>             a new signing secret (shown only once); the previous one keeps signing alongside it
                          for 24 hours, so receivers can switch over
  disable <id>            stop sending to the endpoint; what it would have received meanwhile is skipped
  enable <id>             send to it again (skipped messages only by replay)
  replay <id> --since <RFC 3339 time> [--until <RFC 3339 time>]
                          send the messages of that period to the endpoint again
  remove <id>             delete the endpoint, with its deliveries and their log`;

export interface WebhooksContext {
  parsed: Parsed;
  json: boolean;
  operator: OperatorLogin;
  out: (text: string) => void;
}

interface WebhookEndpoint {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface Attempt {
  message_id: string;
  event_type: string;
  attempt: number;
  attempted_at: string;
  outcome: 'succeeded' | 'failed' | 'skipped';
  status_code: number | null;
  error: string | null;
  latency_ms: number | null;
  response_body?: string | null;
  next_attempt_at: string | null;
}

interface Page<Row> {
  data: Row[];
  next_cursor: string | null;
}

const POLL_INTERVAL_MS = 250;
const DEFAULT_WAIT_SECONDS = 10;
const MAX_WAIT_SECONDS = 300;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const shortTime = (iso: string | null) => (iso ? iso.replace('T', ' ').replace(/\.\d+/, '') : '');

const ENDPOINT_COLUMNS: Column<WebhookEndpoint>[] = [
  { name: 'id', max: 36 },
  { name: 'status', max: 8 },
  { name: 'url', max: 48 },
  { name: 'events', max: 28, value: (endpoint) => endpoint.events.join(',') },
  { name: 'disabled_reason', max: 48 },
];

const ATTEMPT_COLUMNS: Column<Attempt>[] = [
  { name: 'attempted_at', max: 20, value: (attempt) => shortTime(attempt.attempted_at) },
  { name: 'message_id', max: 36 },
  { name: 'event_type', max: 14 },
  { name: 'attempt', max: 7 },
  { name: 'outcome', max: 9 },
  { name: 'status/error', max: 32, value: (attempt) => attempt.status_code ?? attempt.error },
  { name: 'latency_ms', max: 10 },
  { name: 'next_attempt_at', max: 20, value: (attempt) => shortTime(attempt.next_attempt_at) },
];

/** One attempt in words: `HTTP 200 in 12 ms`, `connection refused after 3 ms`. */
export function describeAttempt(attempt: Attempt): string {
  const what = attempt.status_code !== null && attempt.status_code !== undefined ? `HTTP ${attempt.status_code}` : (attempt.error ?? 'no answer');
  if (attempt.latency_ms === null || attempt.latency_ms === undefined) return what;
  return `${what} ${attempt.status_code !== null && attempt.status_code !== undefined ? 'in' : 'after'} ${attempt.latency_ms} ms`;
}

class Webhooks {
  /** Text and tables on a terminal; the service's JSON otherwise, or with --json. */
  private readonly human: boolean;

  constructor(
    private readonly ctx: WebhooksContext,
    private readonly operator: OperatorLogin,
  ) {
    this.human = !ctx.json && process.stdout.isTTY === true;
  }

  /** A request as the operator; any non-2xx answer ends the command, a missing scope with what to do about it. */
  private async call(path: string, options: RequestOptions = {}): Promise<HttpResponse> {
    return ensureScope(await this.operator.request(path, options), this.operator, WEBHOOKS_SCOPE, 'manage webhooks');
  }

  private printJson(value: unknown): void {
    this.ctx.out(JSON.stringify(value, null, 2));
  }

  private endpointLines(endpoint: WebhookEndpoint): string[] {
    return [
      `  url:          ${endpoint.url}`,
      `  events:       ${endpoint.events.join(', ')}`,
      ...(endpoint.description ? [`  description:  ${endpoint.description}`] : []),
      `  status:       ${endpoint.status}${endpoint.disabled_reason ? ` (${endpoint.disabled_reason})` : ''}`,
    ];
  }

  async add(url: string, events: string[], description: string | undefined): Promise<number> {
    const body: Record<string, unknown> = { url };
    if (events.length) body.events = events;
    if (description !== undefined) body.description = description;
    const response = await this.call('/api/v1/webhooks', { json: body });
    const created = response.body as WebhookEndpoint & { secret: string };
    if (!this.human) {
      this.printJson(created);
      process.stderr.write('the secret in this answer is shown only once: keep it now\n');
      return EXIT.ok;
    }
    this.ctx.out(
      [
        `created webhook endpoint ${created.id}`,
        ...this.endpointLines(created),
        '',
        'signing secret (shown only once: keep it now, it cannot be shown again):',
        `  ${created.secret}`,
        '',
        `receivers verify the webhook-signature header with it (Standard Webhooks); \`leads webhooks test ${created.id}\` sends one`,
      ].join('\n'),
    );
    return EXIT.ok;
  }

  async list(): Promise<number> {
    const body = (await this.call('/api/v1/webhooks')).body as Page<WebhookEndpoint>;
    if (!this.human) this.printJson(body);
    else this.ctx.out(body.data.length ? formatRows(body.data, ENDPOINT_COLUMNS, process.stdout.columns || 120).join('\n') : 'no webhook endpoints');
    return EXIT.ok;
  }

  async test(id: string, waitSeconds: number): Promise<number> {
    const queued = (await this.call(`${endpointPath(id)}/test`, { method: 'POST' })).body as { message_id: string; event_type: string };
    const see = `leads webhooks deliveries ${id} --message ${queued.message_id}`;
    if (waitSeconds === 0) {
      if (this.human) this.ctx.out(`queued ${queued.event_type} ${queued.message_id} for ${id}; see \`${see}\``);
      else this.printJson(queued);
      return EXIT.ok;
    }
    if (this.human) process.stderr.write(`queued ${queued.event_type} ${queued.message_id}; waiting up to ${waitSeconds} s for its first attempt\n`);
    const first = await this.firstAttempt(id, queued.message_id, Date.now() + waitSeconds * 1000);
    if (!this.human) this.printJson({ ...queued, attempt: first ?? null });
    if (!first) {
      throw new CliError(
        `error: no attempt to deliver ${queued.message_id} within ${waitSeconds} s (it stays queued); see \`${see}\``,
        EXIT.webhookNotAttempted,
      );
    }
    const outcome = describeAttempt(first);
    if (first.outcome === 'succeeded') {
      if (this.human) this.ctx.out(`delivered ${queued.event_type} ${queued.message_id}: ${outcome}`);
      return EXIT.ok;
    }
    const next = first.next_attempt_at ? `; next attempt at ${first.next_attempt_at}` : '';
    throw new CliError(
      `error: the first attempt to deliver ${queued.message_id} ${first.outcome === 'skipped' ? 'was skipped' : 'failed'}: ${outcome}${next}`,
      EXIT.webhookFailed,
    );
  }

  /** Polls the log for the message's first attempt until `deadline`; undefined when none was made by then. */
  private async firstAttempt(id: string, messageId: string, deadline: number): Promise<Attempt | undefined> {
    const query = new URLSearchParams({ message_id: messageId });
    for (;;) {
      const page = (await this.call(`${endpointPath(id)}/deliveries?${query}`)).body as Page<Attempt>;
      if (page.data.length) return page.data.reduce((first, attempt) => (attempt.attempt < first.attempt ? attempt : first));
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      await sleep(Math.min(POLL_INTERVAL_MS, left));
    }
  }

  async deliveries(id: string, parsed: Parsed): Promise<number> {
    const query = new URLSearchParams();
    if (parsed.options.limit !== undefined) query.set('limit', parsed.options.limit);
    if (parsed.options.cursor !== undefined) query.set('cursor', parsed.options.cursor);
    if (parsed.options.message !== undefined) query.set('message_id', parsed.options.message);
    const page = async () => (await this.call(`${endpointPath(id)}/deliveries?${query}`)).body as Page<Attempt>;
    const width = process.stdout.columns || 120;
    if (!parsed.switches.has('all')) {
      const body = await page();
      if (!this.human) this.printJson(body);
      else {
        this.ctx.out(body.data.length ? formatRows(body.data, ATTEMPT_COLUMNS, width).join('\n') : 'no attempts');
        if (body.next_cursor) {
          const more = [...query.entries()]
            .filter(([name]) => name !== 'cursor')
            .map(([name, value]) => ` --${name === 'message_id' ? 'message' : name} ${value}`);
          process.stderr.write(`more: leads webhooks deliveries ${id} --cursor ${body.next_cursor}${more.join('')}\n`);
        }
      }
      return EXIT.ok;
    }
    // Page by page, as `leads list --all` does: one JSON document (or one table) streamed as it arrives.
    let count = 0;
    if (!this.human) process.stdout.write('{"data":[');
    for (;;) {
      const body = await page();
      if (this.human) {
        if (body.data.length || count === 0)
          this.ctx.out(
            formatRows(body.data, ATTEMPT_COLUMNS, width, true)
              .slice(count === 0 ? 0 : 2)
              .join('\n'),
          );
      } else {
        for (const [i, attempt] of body.data.entries()) process.stdout.write(`${count + i === 0 ? '\n' : ',\n'}${JSON.stringify(attempt)}`);
      }
      count += body.data.length;
      if (!body.next_cursor) break;
      query.set('cursor', body.next_cursor);
    }
    if (!this.human) this.ctx.out(`${count ? '\n' : ''}],"next_cursor":null}`);
    else process.stderr.write(`${count} attempts\n`);
    return EXIT.ok;
  }

  async rotate(id: string): Promise<number> {
    const rotated = (await this.call(`${endpointPath(id)}/rotate-secret`, { method: 'POST' })).body as {
      id: string;
      secret: string;
      previous_secret_expires_at: string | null;
    };
    if (!this.human) {
      this.printJson(rotated);
      process.stderr.write('the secret in this answer is shown only once: keep it now\n');
      return EXIT.ok;
    }
    this.ctx.out(
      [
        `new signing secret for ${rotated.id} (shown only once: keep it now, it cannot be shown again):`,
        `  ${rotated.secret}`,
        '',
        rotated.previous_secret_expires_at
          ? `the previous secret keeps signing too (a second signature) until ${rotated.previous_secret_expires_at}`
          : 'the previous secret no longer signs',
      ].join('\n'),
    );
    return EXIT.ok;
  }

  async setStatus(id: string, status: 'enabled' | 'disabled'): Promise<number> {
    const endpoint = (await this.call(endpointPath(id), { method: 'PATCH', json: { status } })).body as WebhookEndpoint;
    if (!this.human) this.printJson(endpoint);
    else if (status === 'enabled')
      this.ctx.out(`enabled ${endpoint.id} (${endpoint.url}); messages skipped while it was disabled are sent only by \`leads webhooks replay\``);
    else
      this.ctx.out(
        `disabled ${endpoint.id} (${endpoint.url}); nothing is sent to it, and its messages are skipped, until \`leads webhooks enable ${endpoint.id}\``,
      );
    return EXIT.ok;
  }

  async replay(id: string, since: string, until: string | undefined): Promise<number> {
    const result = (await this.call(`${endpointPath(id)}/replay`, { json: until === undefined ? { since } : { since, until } })).body as { replayed: number };
    if (!this.human) this.printJson(result);
    else this.ctx.out(`replaying ${result.replayed} message${result.replayed === 1 ? '' : 's'} to ${id}; follow them with \`leads webhooks deliveries ${id}\``);
    return EXIT.ok;
  }

  async remove(id: string): Promise<number> {
    await this.call(endpointPath(id), { method: 'DELETE' });
    if (!this.human) this.printJson({ id, removed: true });
    else this.ctx.out(`removed webhook endpoint ${id}, with its deliveries and their log`);
    return EXIT.ok;
  }
}

const endpointPath = (id: string) => `/api/v1/webhooks/${encodeURIComponent(id)}`;

/** `--wait <seconds>`: 0 to not wait, fractions allowed. */
function waitOption(parsed: Parsed): number {
  const raw = parsed.options.wait;
  if (raw === undefined) return DEFAULT_WAIT_SECONDS;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || value > MAX_WAIT_SECONDS) throw new UsageError(`--wait must be a number of seconds from 0 to ${MAX_WAIT_SECONDS}`);
  return value;
}

/** Each subcommand's options, and what its one argument is (if it takes one). */
const SUBCOMMANDS: Record<string, { options: string[]; argument?: string }> = {
  add: { options: ['event', 'description'], argument: 'url' },
  list: { options: [] },
  test: { options: ['wait'], argument: 'id' },
  deliveries: { options: ['limit', 'cursor', 'all', 'message'], argument: 'id' },
  rotate: { options: [], argument: 'id' },
  disable: { options: [], argument: 'id' },
  enable: { options: [], argument: 'id' },
  replay: { options: ['since', 'until'], argument: 'id' },
  remove: { options: [], argument: 'id' },
};

export async function webhooks(ctx: WebhooksContext): Promise<number> {
  const [sub, ...rest] = ctx.parsed.positionals;
  const names = Object.keys(SUBCOMMANDS).join(', ');
  if (sub === undefined) throw new UsageError(`webhooks needs a command: ${names}`);
  const spec = Object.hasOwn(SUBCOMMANDS, sub) ? SUBCOMMANDS[sub] : undefined;
  if (!spec) throw new UsageError(`unknown webhooks command "${sub}"; one of ${names}`);
  // Checked against the subcommand, so that messages name it (`webhooks list does not take --event`).
  const parsed: Parsed = { ...ctx.parsed, command: `webhooks ${sub}`, positionals: rest };
  allowOnly(parsed, spec.options, spec.argument ? 1 : 0);
  const argument = rest[0];
  if (spec.argument && !argument) {
    throw new UsageError(
      spec.argument === 'url'
        ? 'webhooks add needs a URL: leads webhooks add https://example.com/hooks/leads'
        : `webhooks ${sub} needs an endpoint id: leads webhooks ${sub} <id>`,
    );
  }
  const wait = sub === 'test' ? waitOption(parsed) : 0;
  const events = (parsed.repeated.event ?? []).flatMap((value) => value.split(',')).map((value) => value.trim());
  if (events.some((event) => event === '')) throw new UsageError('--event needs an event type, e.g. --event lead.received');
  const since = parsed.options.since;
  if (sub === 'replay' && since === undefined) throw new UsageError('webhooks replay needs --since <RFC 3339 time>, e.g. --since 2025-01-31T00:00:00Z');
  if (!ctx.operator.current()) throw notLoggedIn();
  const commands = new Webhooks(ctx, ctx.operator);
  switch (sub) {
    case 'add':
      return commands.add(argument, events, parsed.options.description);
    case 'list':
      return commands.list();
    case 'test':
      return commands.test(argument, wait);
    case 'deliveries':
      return commands.deliveries(argument, parsed);
    case 'rotate':
      return commands.rotate(argument);
    case 'disable':
      return commands.setStatus(argument, 'disabled');
    case 'enable':
      return commands.setStatus(argument, 'enabled');
    case 'replay':
      return commands.replay(argument, since!, parsed.options.until);
    default:
      return commands.remove(argument);
  }
}
