// `leads notify …`: the addresses told of new leads by e-mail (issue 34, /docs/notifications), managed with an operator
// login that has notifications:manage. Each address confirms itself, by a button on the page its confirmation e-mail opens.
import { Parsed, UsageError, allowOnly, intOption } from './args.js';
import { EXIT, HttpResponse, RequestOptions } from './http.js';
import { Column, formatRows } from './list.js';
import { OperatorLogin, ensureScope, notLoggedIn } from './login.js';

export const NOTIFY_SCOPE = 'notifications:manage';
const MODES = ['immediate', 'daily_digest'];
const LANGUAGES = ['pt-BR', 'en'];

export const NOTIFY_HELP = `Usage: leads notify <command> [options]

E-mail notifications: each accepted lead (immediate) or one e-mail a day with the previous day's leads
(daily_digest, at the service's NOTIFY_DIGEST_AT in its TIME_ZONE), sent to addresses that confirmed they want
them. Needs an operator login (leads login) whose client has ${NOTIFY_SCOPE}.
On a terminal the answers are shown as text and tables; otherwise (or with --json) as the service's JSON.

Commands:
  add <email> [--mode immediate|daily_digest] [--language pt-BR|en] [--no-personal-data]
                          add a recipient (POST /api/v1/notification-recipients): it gets a confirmation
                          e-mail, and nothing else until someone at that address presses its button.
                          Defaults: --mode immediate, --language pt-BR, the lead's data in the e-mail
                          (--no-personal-data: only the lead's id and a link)
  list [--limit N] [--cursor <cursor>]
                          the recipients, oldest first: id, status, mode, language, email
  test <id>               send the recipient a test e-mail (confirmed recipients only)
  remove <id>             delete the recipient; it gets nothing more`;

export interface NotifyContext {
  parsed: Parsed;
  json: boolean;
  operator: OperatorLogin;
  out: (text: string) => void;
}

interface Recipient {
  id: string;
  email: string;
  mode: string;
  language: string;
  include_personal_data: boolean;
  status: string;
  status_reason?: string | null;
}

const RECIPIENT_COLUMNS: Column<Recipient>[] = [
  { name: 'id', max: 36 },
  { name: 'status', max: 12 },
  { name: 'mode', max: 12 },
  { name: 'language', max: 8 },
  { name: 'personal_data', max: 13, value: (recipient) => (recipient.include_personal_data ? 'yes' : 'no') },
  { name: 'email', max: 48 },
  { name: 'status_reason', max: 40 },
];

const recipientPath = (id: string) => `/api/v1/notification-recipients/${encodeURIComponent(id)}`;

class Notify {
  /** Text and tables on a terminal; the service's JSON otherwise, or with --json. */
  private readonly human: boolean;

  constructor(private readonly ctx: NotifyContext) {
    this.human = !ctx.json && process.stdout.isTTY === true;
  }

  private async call(path: string, options: RequestOptions = {}): Promise<HttpResponse> {
    return ensureScope(await this.ctx.operator.request(path, options), this.ctx.operator, NOTIFY_SCOPE, 'manage e-mail notifications');
  }

  private printJson(value: unknown): void {
    this.ctx.out(JSON.stringify(value, null, 2));
  }

  async add(email: string, body: Record<string, unknown>): Promise<number> {
    const created = (await this.call('/api/v1/notification-recipients', { json: { email, ...body } })).body as Recipient;
    if (!this.human) this.printJson(created);
    else
      this.ctx.out(
        [
          `added ${created.email} as ${created.id} (${created.mode}, ${created.language}${created.include_personal_data ? '' : ', no personal data'}): ${created.status}`,
          'a confirmation e-mail is on its way: nothing else is sent to this address until someone there presses its button',
          `(\`leads notify list\` shows when it is confirmed)`,
        ].join('\n'),
      );
    return EXIT.ok;
  }

  async list(parsed: Parsed): Promise<number> {
    const query = new URLSearchParams();
    const limit = intOption(parsed, 'limit', 1, 200);
    if (limit !== undefined) query.set('limit', String(limit));
    if (parsed.options.cursor !== undefined) query.set('cursor', parsed.options.cursor);
    const body = (await this.call(`/api/v1/notification-recipients${query.toString() ? `?${query}` : ''}`)).body as {
      data: Recipient[];
      next_cursor: string | null;
    };
    if (!this.human) {
      this.printJson(body);
      return EXIT.ok;
    }
    this.ctx.out(body.data.length ? formatRows(body.data, RECIPIENT_COLUMNS, process.stdout.columns || 120).join('\n') : 'no notification recipients');
    if (body.next_cursor) process.stderr.write(`more: leads notify list --cursor ${body.next_cursor}${limit ? ` --limit ${limit}` : ''}\n`);
    return EXIT.ok;
  }

  async test(id: string): Promise<number> {
    const queued = (await this.call(`${recipientPath(id)}/test`, { method: 'POST' })).body as Record<string, unknown> | undefined;
    if (!this.human) this.printJson(queued ?? { id, queued: true });
    else
      this.ctx.out(
        `queued a test e-mail to ${id}${queued?.message_id ? ` (${String(queued.message_id)})` : ''}; it arrives within a minute unless the mail server refuses it`,
      );
    return EXIT.ok;
  }

  async remove(id: string): Promise<number> {
    await this.call(recipientPath(id), { method: 'DELETE' });
    if (!this.human) this.printJson({ id, removed: true });
    else this.ctx.out(`removed notification recipient ${id}; it gets nothing more`);
    return EXIT.ok;
  }
}

/** Each subcommand's options, and whether it takes an argument. */
const SUBCOMMANDS: Record<string, { options: string[]; argument?: 'email' | 'id' }> = {
  add: { options: ['mode', 'language', 'no-personal-data'], argument: 'email' },
  list: { options: ['limit', 'cursor'] },
  test: { options: [], argument: 'id' },
  remove: { options: [], argument: 'id' },
};

/** The add request's members from its options; unknown values are refused here, with the choices. */
function addBody(parsed: Parsed): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const { mode, language } = parsed.options;
  if (mode !== undefined && !MODES.includes(mode)) throw new UsageError(`--mode must be ${MODES.join(' or ')}`);
  if (language !== undefined && !LANGUAGES.includes(language)) throw new UsageError(`--language must be ${LANGUAGES.join(' or ')}`);
  // The API asks for a mode; immediate is the CLI's default, as its help says.
  body.mode = mode ?? 'immediate';
  if (language !== undefined) body.language = language;
  if (parsed.switches.has('no-personal-data')) body.include_personal_data = false;
  return body;
}

export async function notify(ctx: NotifyContext): Promise<number> {
  const [sub, ...rest] = ctx.parsed.positionals;
  const names = Object.keys(SUBCOMMANDS).join(', ');
  if (sub === undefined) throw new UsageError(`notify needs a command: ${names}`);
  const spec = Object.hasOwn(SUBCOMMANDS, sub) ? SUBCOMMANDS[sub] : undefined;
  if (!spec) throw new UsageError(`unknown notify command "${sub}"; one of ${names}`);
  const parsed: Parsed = { ...ctx.parsed, command: `notify ${sub}`, positionals: rest };
  allowOnly(parsed, spec.options, spec.argument ? 1 : 0);
  const argument = rest[0];
  if (spec.argument && !argument) {
    throw new UsageError(
      spec.argument === 'email'
        ? 'notify add needs an e-mail address: leads notify add vendas@example.com'
        : `notify ${sub} needs a recipient id: leads notify ${sub} <id>`,
    );
  }
  const body = sub === 'add' ? addBody(parsed) : {};
  if (!ctx.operator.current()) throw notLoggedIn();
  const commands = new Notify(ctx);
  switch (sub) {
    case 'add':
      return commands.add(argument, body);
    case 'list':
      return commands.list(parsed);
    case 'test':
      return commands.test(argument);
    default:
      return commands.remove(argument);
  }
}
