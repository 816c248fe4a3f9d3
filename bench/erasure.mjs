// Erasure benchmark (issue 22, docs/decisions/0029-data-subject-requests.md). Not part of CI.
// Usage (after `npm run build`; `npm run bench:erasure -- …` builds when stale):
//   node bench/erasure.mjs [--rows 1000000] [--people 20] [--databases sqlite,postgres]
// Seeds --rows leads as bench/read.mjs does (SQLite: prepared INSERTs; PostgreSQL, when TEST_DATABASE_URL is set: one
// INSERT … SELECT FROM generate_series), starts the built service on them, then for --people people with one lead each
// (and for the frequent person, 1 lead in 10,000: 100 leads) times POST /api/v1/data-subject-requests/erasure, and as
// the baseline of the same run the read of the same person's leads (GET /api/v1/leads?email=…). Target: an erasure of
// one person among 1,000,000 leads in ≤ 1 s. Prints a Markdown section for bench/RESULTS.md on stdout.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { FREQUENT_EMAIL, median, operatorToken, SEED_START_MS, SEED_STEP_MS, seedSqlite, startService } from './support.mjs';

function parseArgs(argv) {
  const options = { rows: 1_000_000, people: 20, databases: process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'] };
  for (let i = 0; i < argv.length; i++) {
    const [name, value] = [argv[i].replace(/^--/, ''), argv[i + 1]];
    if (name === 'rows' || name === 'people') options[name] = Number(value);
    else if (name === 'databases') options.databases = value.split(',');
    else throw new Error(`unknown option ${argv[i]}`);
    i++;
  }
  return options;
}

/** The e-mail of seeded lead `i` (bench/support.mjs seedSqlite and PG_SEED below), one lead per address. */
const emailOf = (i) => `Lead${i}@example${i % 97}.com.br`;

async function timed(fn) {
  const began = performance.now();
  const result = await fn();
  return { ms: performance.now() - began, result };
}

async function measure(label, service, opts) {
  const reader = await operatorToken(service, 'bench reader', 'leads:read');
  const eraser = await operatorToken(service, 'bench eraser', 'leads:erase');
  const post = (token, body) =>
    fetch(`${service.base}/api/v1/data-subject-requests/erasure`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (res) => ({ status: res.status, body: await res.json() }));
  const read = (email) =>
    fetch(`${service.base}/api/v1/leads?email=${encodeURIComponent(email)}&limit=200`, { headers: { authorization: `Bearer ${reader}` } }).then(async (res) => {
      if (res.status !== 200) throw new Error(`read answered ${res.status}`);
      return (await res.json()).data.length;
    });
  // Warm-up: one read and one erasure of people outside the measured ones.
  await read(emailOf(opts.rows - 3));
  await post(eraser, { email: emailOf(opts.rows - 2) });
  const reads = [];
  const erasures = [];
  for (let k = 0; k < opts.people; k++) {
    const email = emailOf(Math.floor(((k + 0.5) * opts.rows) / opts.people) | 2);
    const r = await timed(() => read(email));
    const e = await timed(() => post(eraser, { email }));
    if (e.result.status !== 200 || e.result.body.counts.leads !== r.result)
      throw new Error(`${label}: erasure of ${email} answered ${e.result.status} ${JSON.stringify(e.result.body)}`);
    reads.push(r.ms);
    erasures.push(e.ms);
  }
  const frequentRead = await timed(() => read(FREQUENT_EMAIL));
  const frequent = await timed(() => post(eraser, { email: FREQUENT_EMAIL }));
  const line = {
    label,
    readP50: median(reads),
    eraseP50: median(erasures),
    eraseMax: Math.max(...erasures),
    ratio: median(erasures.map((ms, i) => ms / reads[i])),
    frequentLeads: frequent.result.body.counts.leads,
    frequentRead: frequentRead.ms,
    frequentErase: frequent.ms,
  };
  console.error(
    `${label}: erasure p50 ${line.eraseP50.toFixed(1)} ms (max ${line.eraseMax.toFixed(1)}), read p50 ${line.readP50.toFixed(1)} ms; ${line.frequentLeads} leads in ${line.frequentErase.toFixed(1)} ms`,
  );
  return line;
}

async function onSqlite(opts) {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-erasure-'));
  let service;
  try {
    await (await startService(dataDir, { WEBHOOK_WORKER: 'false' })).stop();
    const seconds = seedSqlite(join(dataDir, 'leads.sqlite'), opts.rows);
    console.error(`SQLite: seeded ${opts.rows} leads in ${seconds.toFixed(1)} s`);
    service = await startService(dataDir);
    return { ...(await measure('SQLite', service, opts)), seconds };
  } finally {
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const PG_SEED = `
  INSERT INTO leads (id, nome, email, email_folded, telefone, telefone_e164, empresa, mensagem, origem, channel, received_at)
  SELECT md5(i::text)::uuid, 'Maria Fernanda Souza ' || i, email, lower(email),
         CASE WHEN i % 3 <> 0 THEN '+55 (11) 98765-4321' END, CASE WHEN i % 3 <> 0 THEN '+5511987654321' END,
         CASE WHEN i % 4 <> 0 THEN 'Souza, Filhos & Cia ' || (i % 1000) END, 'Quero uma proposta.',
         (ARRAY['site', 'google-ads', 'linkedin', 'bench', NULL])[i % 5 + 1], (ARRAY['api', 'form', 'mcp', 'cli'])[i % 4 + 1],
         to_timestamp($1::double precision / 1000) + i * ($2 || ' milliseconds')::interval
  FROM (SELECT i, CASE WHEN i % 10000 = 1 THEN $3 ELSE 'Lead' || i || '@example' || (i % 97) || '.com.br' END AS email
        FROM generate_series(0, $4::int - 1) AS i) AS s`;

async function onPostgres(opts) {
  const schema = `bench_erasure_${process.pid}`;
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await admin.connect();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-erasure-pg-'));
  let service;
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
    const url = new URL(process.env.TEST_DATABASE_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    service = await startService(dataDir, { DATABASE_URL: url.toString(), SECRETS_KEY: randomBytes(32).toString('base64') });
    const began = performance.now();
    await admin.query(`SET search_path = ${schema}`);
    await admin.query(PG_SEED, [SEED_START_MS, SEED_STEP_MS, FREQUENT_EMAIL, opts.rows]);
    await admin.query('VACUUM ANALYZE leads');
    const seconds = (performance.now() - began) / 1000;
    console.error(`PostgreSQL: seeded ${opts.rows} leads in ${seconds.toFixed(1)} s`);
    return { ...(await measure('PostgreSQL', service, opts)), seconds };
  } finally {
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}

const opts = parseArgs(process.argv.slice(2));
const lines = [];
if (opts.databases.includes('sqlite')) lines.push(await onSqlite(opts));
if (opts.databases.includes('postgres')) lines.push(await onPostgres(opts));
const ms = (v) => v.toFixed(1);
console.log(`## Erasure (issue 22), \`bench/erasure.mjs\`, ${new Date().toISOString().slice(0, 10)}

${opts.rows.toLocaleString('en')} leads; ${opts.people} people with one lead each, erased one after the other by
\`POST /api/v1/data-subject-requests/erasure\`, each after the read of the same person's leads (\`GET /api/v1/leads?email=…\`,
the baseline of the same run); then the frequent person (1 lead in 10,000). ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), Node ${process.version}.
Target: one person's erasure ≤ 1 s.

| Database | seed | read p50 | erasure p50 | erasure max | erasure / read (median) | frequent person: leads, read, erasure | target |
|---|---|---|---|---|---|---|---|
${lines
  .map(
    (l) =>
      `| ${l.label} | ${l.seconds.toFixed(1)} s | ${ms(l.readP50)} ms | ${ms(l.eraseP50)} ms | ${ms(l.eraseMax)} ms | ${l.ratio.toFixed(2)} | ${l.frequentLeads}, ${ms(l.frequentRead)} ms, ${ms(l.frequentErase)} ms | ${Math.max(l.eraseMax, l.frequentErase) <= 1000 ? 'met' : 'missed'} |`,
  )
  .join('\n')}
`);
