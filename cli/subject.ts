// `leads subject …`: data-subject requests (docs/decisions/0029-data-subject-requests.md), made by an operator for the
// person: a copy of their leads, their erasure, or the revocation of their consent to communications.
import { createInterface } from 'node:readline';
import { foldEmail } from '../src/leads/lead-rules.js';
import { Parsed, UsageError, allowOnly } from './args.js';
import { exportTo } from './export.js';
import { Column, formatRows } from './list.js';
import { CliError, EXIT } from './http.js';
import { OperatorLogin, ensureScope, notLoggedIn } from './login.js';

export const SUBJECT_HELP = `Usage: leads subject access|erase|revoke <email> [--json]
       leads subject access <email> [--output FILE]
       leads subject erase <email> [--yes | --dry-run] [--json]
       leads subject list [--status S[,S…]] [--limit N] [--cursor C] [--json]

Data-subject requests (LGPD Art. 18) for the person whose leads carry <email> (any letter case). Needs an operator
login (leads login); each request is audited by the service without the address. Prints the receipt (lead ids and
counts); with --json, or when stdout is not a terminal, the service's JSON answer.

Commands:
  access <email>          every lead of the person as one JSON document, with the consent wordings they name, the
                          request id of each page and the counts (POST /api/v1/data-subject-requests/access, scope
                          leads:read): read page by page (500 leads each) and written as each page comes, so any
                          number of leads fits. --output FILE writes it to a temporary file beside FILE (mode 0600)
                          renamed to FILE when complete; without it, to standard output
  erase <email>           delete every lead of the person and what refers to them: webhook messages and logs,
                          consent wordings no other lead shows, the address in agent registrations; receivers get
                          lead.erased (POST /api/v1/data-subject-requests/erasure, scope leads:erase). It cannot be
                          undone: on a terminal it shows what would be erased and asks for the address again (an
                          answer that differs erases nothing, exit 1); --yes erases without asking. Without a
                          terminal and without --yes it refuses (exit 1), so a script never waits for an answer.
                          --dry-run counts what would be erased ({"email", "dry_run": true}) and erases nothing.
  revoke <email>          decline the person's consent to communications on every stored lead from now on;
                          receivers get consent.revoked (POST /api/v1/data-subject-requests/consent-revocation,
                          scope leads:erase)
  list                    the queue of requests, the operators' and the people's own (from /privacy), newest first:
                          type, status, channel, when received, verified and due (15 days after verification), the
                          address masked (GET /api/v1/data-subject-requests, scope leads:read). Verified ones by
                          default; --status identity_unverified, verified, completed, locked or expired, comma-separated`;

const REQUESTS: Record<string, { path: string; scope: string }> = {
  access: { path: 'access', scope: 'leads:read' },
  erase: { path: 'erasure', scope: 'leads:erase' },
  revoke: { path: 'consent-revocation', scope: 'leads:erase' },
};

export interface SubjectContext {
  parsed: Parsed;
  json: boolean;
  operator: OperatorLogin;
  out: (text: string) => void;
}

interface Receipt {
  request_id: string;
  lead_ids: string[];
  counts: Record<string, number>;
  revoked_at?: string;
  ids_truncated?: boolean;
}

export async function subject(ctx: SubjectContext): Promise<number> {
  const [sub, email, ...rest] = ctx.parsed.positionals;
  const names = [...Object.keys(REQUESTS), 'list'].join(', ');
  if (sub === undefined) throw new UsageError(`subject needs a command: ${names}`);
  if (sub === 'list') return queue(ctx, { ...ctx.parsed, command: 'subject list', positionals: [email, ...rest].filter((value) => value !== undefined) });
  const request = Object.hasOwn(REQUESTS, sub) ? REQUESTS[sub] : undefined;
  if (!request) throw new UsageError(`unknown subject command "${sub}"; one of ${names}`);
  const parsed: Parsed = { ...ctx.parsed, command: `subject ${sub}`, positionals: [email, ...rest].filter((value) => value !== undefined) };
  const erase = sub === 'erase';
  allowOnly(parsed, erase ? ['yes', 'dry-run'] : sub === 'access' ? ['output'] : [], 1);
  if (!email) throw new UsageError(`subject ${sub} needs the person's e-mail address: leads subject ${sub} maria@example.com`);
  const dryRun = erase && parsed.switches.has('dry-run');
  if (dryRun && parsed.switches.has('yes')) throw new UsageError('--dry-run erases nothing: leave out --yes');
  if (!ctx.operator.current()) throw notLoggedIn();
  const send = async (body: Record<string, unknown>): Promise<Receipt> => {
    const response = await ctx.operator.request(`/api/v1/data-subject-requests/${request.path}`, { json: body });
    ensureScope(response, ctx.operator, request.scope, 'make this request');
    return response.body as Receipt;
  };
  if (erase && !dryRun && !parsed.switches.has('yes')) {
    if (process.stdin.isTTY !== true) {
      throw new CliError(
        'error: subject erase cannot be undone, and there is no terminal to confirm it on: pass --yes to erase ' +
          '(or --dry-run to count what would be erased). Nothing was erased.',
        EXIT.usage,
      );
    }
    const preview = await send({ email, dry_run: true });
    process.stderr.write(`${countsLine('would erase', preview)}\nThis cannot be undone. `);
    if (!(await confirmAddress(email, process.stdin, process.stderr))) {
      throw new CliError('error: the address typed does not match; nothing was erased', EXIT.usage);
    }
  }
  if (sub === 'access') {
    const output = parsed.options.output;
    if (output === '') throw new UsageError('--output needs a file name');
    // The copy to hand over: always as JSON, written page by page as the pages come.
    await exportTo(
      accessDocument((cursor) => send(cursor === undefined ? { email } : { email, cursor }) as Promise<AccessPage>),
      'json',
      output,
      false,
    );
    return EXIT.ok;
  }
  const receipt = await send(dryRun ? { email, dry_run: true } : { email });
  if (ctx.json || process.stdout.isTTY !== true) {
    ctx.out(JSON.stringify(receipt, null, 2));
    return EXIT.ok;
  }
  const done = !erase ? `revoked consent to communications at ${receipt.revoked_at}` : dryRun ? 'would erase (dry run: nothing was erased)' : 'erased';
  const more = receipt.ids_truncated ? [`  … and ${(receipt.counts.leads ?? 0) - receipt.lead_ids.length} more (the audit keeps every id)`] : [];
  ctx.out([countsLine(done, receipt), `request ${receipt.request_id}`, ...receipt.lead_ids.map((id) => `  ${id}`), ...more].join('\n'));
  return EXIT.ok;
}

/** An entry of GET /api/v1/data-subject-requests (the contract's DataSubjectQueueEntry; the CLI imports no service code). */
interface QueueEntry {
  id: string;
  type: string;
  status: string;
  channel: string;
  received_at: string;
  due_at: string | null;
  email_masked: string | null;
}

const shortTime = (iso: string | null) => (iso ? iso.replace('T', ' ').replace(/:\d\d\.\d+Z$/, 'Z') : '');
const QUEUE_COLUMNS: Column<QueueEntry>[] = [
  { name: 'received_at', max: 17, value: (entry) => shortTime(entry.received_at) },
  { name: 'type', max: 18 },
  { name: 'status', max: 19 },
  { name: 'due_at', max: 17, value: (entry) => shortTime(entry.due_at) },
  { name: 'email', max: 32, value: (entry) => entry.email_masked },
  { name: 'channel', max: 12 },
  { name: 'id', max: 36 },
];

/** One page of the queue: a table on a terminal (the next page's command on stderr), else the service's JSON. */
async function queue(ctx: SubjectContext, parsed: Parsed): Promise<number> {
  allowOnly(parsed, ['status', 'limit', 'cursor'], 0);
  if (!ctx.operator.current()) throw notLoggedIn();
  const query = new URLSearchParams();
  for (const name of ['status', 'limit', 'cursor']) if (parsed.options[name] !== undefined) query.set(name, parsed.options[name]);
  const response = await ctx.operator.request(`/api/v1/data-subject-requests${query.size ? `?${query}` : ''}`);
  ensureScope(response, ctx.operator, 'leads:read', 'list the requests');
  const page = response.body as { data: QueueEntry[]; next_cursor: string | null };
  if (ctx.json || process.stdout.isTTY !== true) {
    ctx.out(JSON.stringify(page, null, 2));
    return EXIT.ok;
  }
  ctx.out(page.data.length ? formatRows(page.data, QUEUE_COLUMNS, process.stdout.columns || 120).join('\n') : 'no requests');
  if (page.next_cursor) {
    const more = [...query.entries()].filter(([name]) => name !== 'cursor').map(([name, value]) => ` --${name} ${value}`);
    process.stderr.write(`more: leads subject list --cursor ${page.next_cursor}${more.join('')}\n`);
  }
  return EXIT.ok;
}

interface AccessPage extends Receipt {
  type: 'access';
  requested_at: string;
  completed_at: string;
  data: unknown[];
  consent_texts: { sha256: string; text: string }[];
  next_cursor: string | null;
}

/**
 * The copy of an access request as one JSON document, written as the pages come (each page of at most 500 leads is
 * let go once written): the leads, newest first, then the consent wordings they name (each once: the few distinct
 * wordings are all that is kept across pages), the request id of each page and the counts.
 */
export async function* accessDocument(page: (cursor?: string) => Promise<AccessPage>): AsyncGenerator<Buffer> {
  const indent = (value: unknown) => JSON.stringify(value, null, 2).replace(/\n/g, '\n    ');
  const wordings = new Map<string, string>();
  const requestIds: string[] = [];
  let leads = 0;
  let first: AccessPage | undefined;
  let last: AccessPage;
  let cursor: string | undefined;
  do {
    last = await page(cursor);
    first ??= last;
    if (requestIds.length === 0) yield Buffer.from(`{\n  "type": "access",\n  "requested_at": ${JSON.stringify(first.requested_at)},\n  "leads": [`);
    requestIds.push(last.request_id);
    if (last.data.length) yield Buffer.from(`${last.data.map((lead, i) => `${leads + i ? ',' : ''}\n    ${indent(lead)}`).join('')}`);
    leads += last.data.length;
    for (const { sha256, text } of last.consent_texts) wordings.set(sha256, text);
    cursor = last.next_cursor ?? undefined;
  } while (cursor !== undefined);
  const consentTexts = [...wordings].sort(([a], [b]) => (a < b ? -1 : 1)).map(([sha256, text]) => ({ sha256, text }));
  const rest = { consent_texts: consentTexts, request_ids: requestIds, counts: { leads, consent_texts: consentTexts.length }, completed_at: last.completed_at };
  yield Buffer.from(`${leads ? '\n  ' : ''}],\n${JSON.stringify(rest, null, 2).slice(2)}\n`);
}

function countsLine(label: string, receipt: Receipt): string {
  return `${label}: ${Object.entries(receipt.counts)
    .map(([name, n]) => `${name} ${n}`)
    .join(', ')}`;
}

/**
 * Asks for the address again on `output` and reads one line of `input`: true when it is the same address (any letter
 * case, surrounding spaces ignored). The end of the input, or any other answer, is false.
 */
export async function confirmAddress(email: string, input: NodeJS.ReadableStream, output: NodeJS.WritableStream): Promise<boolean> {
  const lines = createInterface({ input, output, terminal: false });
  try {
    const answer = await new Promise<string | undefined>((resolve) => {
      lines.once('close', () => resolve(undefined));
      lines.question('Type the address again to erase: ', resolve);
    });
    return answer !== undefined && foldEmail(answer.trim()) === foldEmail(email.trim());
  } finally {
    lines.close();
  }
}
