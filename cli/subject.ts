// `leads subject …`: data-subject requests (docs/decisions/0029-data-subject-requests.md), made by an operator for the
// person: a copy of their leads, their erasure, or the revocation of their consent to communications.
import { Parsed, UsageError, allowOnly } from './args.js';
import { CliError, EXIT, asProblem, describeFailure, failure } from './http.js';
import { OperatorLogin, notLoggedIn } from './login.js';

export const SUBJECT_HELP = `Usage: leads subject access|erase|revoke <email> [--json]

Data-subject requests (LGPD Art. 18) for the person whose leads carry <email> (any letter case). Needs an operator
login (leads login); each request is audited by the service without the address. Prints the receipt (lead ids and
counts); with --json, or when stdout is not a terminal, the service's JSON answer.

Commands:
  access <email>          every lead of the person as JSON, with the consent wordings they name
                          (POST /api/v1/data-subject-requests/access, scope leads:read)
  erase <email>           delete every lead of the person and what refers to them: webhook messages and logs,
                          consent wordings no other lead shows, the address in agent registrations; receivers get
                          lead.erased (POST /api/v1/data-subject-requests/erasure, scope leads:erase)
  revoke <email>          decline the person's consent to communications on every stored lead from now on;
                          receivers get consent.revoked (POST /api/v1/data-subject-requests/consent-revocation,
                          scope leads:erase)`;

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
}

export async function subject(ctx: SubjectContext): Promise<number> {
  const [sub, email, ...rest] = ctx.parsed.positionals;
  const names = Object.keys(REQUESTS).join(', ');
  if (sub === undefined) throw new UsageError(`subject needs a command: ${names}`);
  const request = Object.hasOwn(REQUESTS, sub) ? REQUESTS[sub] : undefined;
  if (!request) throw new UsageError(`unknown subject command "${sub}"; one of ${names}`);
  const parsed: Parsed = { ...ctx.parsed, command: `subject ${sub}`, positionals: [email, ...rest].filter((value) => value !== undefined) };
  allowOnly(parsed, [], 1);
  if (!email) throw new UsageError(`subject ${sub} needs the person's e-mail address: leads subject ${sub} maria@example.com`);
  if (!ctx.operator.current()) throw notLoggedIn();
  const response = await ctx.operator.request(`/api/v1/data-subject-requests/${request.path}`, { json: { email } });
  if (response.status === 403 && asProblem(response)?.code === 'insufficient_scope') {
    const clientId = ctx.operator.current()?.client_id ?? '<id>';
    throw new CliError(
      `${describeFailure(response)}\nthe operator login ${clientId} cannot make this request: log in with a client that has the ${request.scope} scope`,
      EXIT.auth,
      response,
    );
  }
  if (response.status !== 200) throw failure(response);
  const receipt = response.body as Receipt;
  if (ctx.json || process.stdout.isTTY !== true || sub === 'access') {
    // An access request's answer is the copy to hand over: always as JSON.
    ctx.out(JSON.stringify(receipt, null, 2));
    return EXIT.ok;
  }
  const counts = Object.entries(receipt.counts)
    .map(([name, n]) => `${name} ${n}`)
    .join(', ');
  const done = sub === 'erase' ? 'erased' : `revoked consent to communications at ${receipt.revoked_at}`;
  ctx.out([`${done}: ${counts}`, `request ${receipt.request_id}`, ...receipt.lead_ids.map((id) => `  ${id}`)].join('\n'));
  return EXIT.ok;
}
