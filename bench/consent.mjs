// Consent and attribution benchmark (issue 22, docs/decisions/0028-consent-attribution-and-data-subject-rights.md).
// Not part of CI. Usage (after `npm run build`; `npm run bench:consent -- …` builds when stale):
//   node bench/consent.mjs [--quick] [--rounds 4] [--duration 10] [--connections 50] [--warmup 1] [--databases sqlite,postgres]
// Lead intake, POST /api/v1/lead with autocannon, of the same lead without and with `legal_bases` (two entries),
// `consent_text` (a form's checkbox label: one wording for every lead, stored once) and `context` (page URL with a query
// string to strip, title, referrer, five UTM members and a click id). Each side gets a fresh service on a fresh
// database (PostgreSQL: a fresh schema, when TEST_DATABASE_URL is set), alternating which goes first in each round.
// Reports each side's req/s and p99, and the median over rounds of the paired ratio with/without (target ≥ 0.9).
// The service runs pinned to CPU 0 (bench/support.mjs); autocannon shares the other core.
// --quick: 1 round of 5 s; to check that a run works, not to quote.
// Prints a Markdown section for bench/RESULTS.md on stdout; progress on stderr.
import { cpus, loadavg } from 'node:os';
import autocannon from 'autocannon';
import { freshDatabase, hasTaskset, median, startService } from './support.mjs';

const PLAIN = {
  nome: 'Maria Fernanda Souza',
  email: 'maria.souza@souzaefilhos.com.br',
  telefone: '+55 (11) 98765-4321',
  empresa: 'Souza & Filhos',
  mensagem: 'Olá!\nPodem me ligar?',
  origem: 'bench',
};
const WITH_CONSENT = {
  ...PLAIN,
  legal_bases: [
    { category: 'communications', type: 'consent', status: 'granted' },
    { category: 'data_processing', type: 'legitimate_interest', status: 'granted' },
  ],
  consent_text: 'Aceito receber comunicações da Souza Benefícios por e-mail e telefone, e sei que posso revogar este consentimento a qualquer momento.',
  context: {
    page_url: 'https://www.souzabeneficios.com.br/contato?utm_source=google&utm_medium=cpc&gclid=Cj0KCQiA#formulario',
    page_title: 'Fale conosco | Souza Benefícios',
    referrer: 'https://www.google.com/',
    utm_source: 'google',
    utm_medium: 'cpc',
    utm_campaign: 'vale-refeicao-2026',
    utm_term: 'vale refeição empresas',
    utm_content: 'anuncio-a',
    gclid: 'Cj0KCQiA4L2BhCvARIsAO0SBdZ',
  },
};
const JSON_HEADERS = { 'content-type': 'application/json' };

function parseArgs(argv) {
  const options = { rounds: 4, duration: 10, connections: 50, warmup: 1, databases: ['sqlite', 'postgres'] };
  const given = new Set();
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    given.add(flag);
    const number = () => Number(argv[++i]);
    if (flag === '--rounds') options.rounds = number();
    else if (flag === '--duration') options.duration = number();
    else if (flag === '--connections') options.connections = number();
    else if (flag === '--warmup') options.warmup = number();
    else if (flag === '--databases') options.databases = argv[++i].split(',');
    else if (flag === '--quick') options.quick = true;
    else throw new Error(`unknown option ${flag}`);
  }
  if (options.quick) {
    if (!given.has('--rounds')) options.rounds = 1;
    if (!given.has('--duration')) options.duration = 5;
  }
  if (!process.env.TEST_DATABASE_URL) options.databases = options.databases.filter((kind) => kind !== 'postgres');
  return options;
}

const log = (line) => process.stderr.write(`${line}\n`);

function runLoad(options) {
  return new Promise((done, fail) => autocannon(options, (error, result) => (error ? fail(error) : done(result))));
}

async function intake(kind, body, opts) {
  const database = await freshDatabase(kind, 'consent');
  const service = await startService(database.dataDir, { ...database.env, SECRETS_KEY: Buffer.alloc(32, 21).toString('base64') });
  try {
    const text = JSON.stringify(body);
    const sample = await fetch(`${service.base}/api/v1/lead`, { method: 'POST', headers: JSON_HEADERS, body: text });
    if (sample.status !== 201) throw new Error(`a sample lead answered ${sample.status}: ${await sample.text()}`);
    const load = { url: `${service.base}/api/v1/lead`, method: 'POST', headers: JSON_HEADERS, body: text, connections: opts.connections };
    if (opts.warmup > 0) await runLoad({ ...load, duration: opts.warmup });
    const result = await runLoad({ ...load, duration: opts.duration });
    if (result.non2xx || result.errors || result.timeouts) throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
    return { rps: result.requests.average, p99: result.latency.p99 };
  } finally {
    await service.stop();
    await database.drop();
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const sections = [];
  for (const kind of opts.databases) {
    const rounds = [];
    for (let round = 1; round <= opts.rounds; round++) {
      const order = round % 2 ? ['without', 'with'] : ['with', 'without'];
      const pair = {};
      for (const side of order) {
        pair[side] = await intake(kind, side === 'with' ? WITH_CONSENT : PLAIN, opts);
        log(`${kind} round ${round}/${opts.rounds} ${side.padEnd(7)}: ${Math.round(pair[side].rps)} req/s, p99 ${pair[side].p99} ms`);
      }
      pair.ratio = pair.with.rps / pair.without.rps;
      log(`${kind} round ${round}: ratio ${pair.ratio.toFixed(3)}`);
      rounds.push(pair);
    }
    const ratio = median(rounds.map((pair) => pair.ratio));
    sections.push(
      [
        `#### ${kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`,
        '',
        '| round | without req/s | without p99 ms | with req/s | with p99 ms | ratio |',
        '| --- | --- | --- | --- | --- | --- |',
        ...rounds.map(
          (p, i) => `| ${i + 1} | ${Math.round(p.without.rps)} | ${p.without.p99} | ${Math.round(p.with.rps)} | ${p.with.p99} | ${p.ratio.toFixed(3)} |`,
        ),
        '',
        `Median ratio with/without: **${ratio.toFixed(3)}** (target ≥ 0.9): ${ratio >= 0.9 ? 'met' : 'missed'}.`,
        '',
      ].join('\n'),
    );
  }
  const when = new Date().toISOString().slice(0, 10);
  process.stdout.write(
    [
      `### Lead intake with legal_bases, consent_text and context (bench/consent.mjs, ${when})`,
      '',
      `${opts.rounds} paired rounds of ${opts.duration} s, ${opts.connections} connections, a fresh service per side; ` +
        `Node ${process.version}, ${cpus().length} CPUs${hasTaskset ? ' (service pinned to CPU 0)' : ''}, load average ${loadavg()[0].toFixed(2)} at the end.`,
      '',
      ...sections,
    ].join('\n'),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
