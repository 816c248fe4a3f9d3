// Inbox benchmark (issue 35): with --rows stored leads (1,000,000 by default) of realistic Brazilian names, the p99 at
// one connection of what the inbox's leads page asks: the first page newest first and its count capped at 10,000, a
// search for a rare name and one for a common name. Bar: each p99 ≤ 100 ms, on SQLite and on PostgreSQL. Not part of CI.
// Usage (after `npm run build`; `npm run bench:inbox -- …` builds when stale):
//   node bench/inbox.mjs [--rows 1000000] [--duration 10] [--keep DIR]
// --keep DIR: the SQLite data directory is kept there, and used as it is when it holds a database already.
// SQLite first, then PostgreSQL when TEST_DATABASE_URL is set (a fresh schema made by the service's migrations, dropped
// at the end). Seeded with direct SQL in batches, search_folded written as the service writes it (dist's lead-search.js),
// the search index built once after the rows (as migration 1766000000000 would). The service runs pinned to CPU 0; each
// target is a closed loop on one connection: GET /api/v1/leads (REST, as the inbox's page calls LeadReader.list), and
// the capped count timed as LeadReader.countUpTo runs it (the same SQL, on its own connection: REST has no count), and
// GET /inbox/leads, the page a person sees (its rows, its count and its held count; a viewer's session made directly in
// the database). Prints a Markdown table.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import pg from 'pg';
import { searchDocument } from '../dist/src/leads/lead-search.js';
import { freshDatabase, get, hasTaskset, operatorToken, percentile, ROOT, startService, uuidV7Like } from './support.mjs';

const PAGE = 50;
const COUNT_CAP = 10_000;
const BAR_MS = 100;
const BATCH = 20_000;
const START_MS = Date.UTC(2024, 0, 1);
/** A lead every 30 s: a million leads over about a year. */
const STEP_MS = 30_000;

// The most common Brazilian given names and surnames (IBGE), accents as written; Silva is about one lead in five.
const GIVEN = [
  'Maria',
  'José',
  'Ana',
  'João',
  'Antônio',
  'Francisco',
  'Carlos',
  'Paulo',
  'Pedro',
  'Lucas',
  'Luíz',
  'Marcos',
  'Luís',
  'Gabriel',
  'Rafael',
  'Francisca',
  'Daniel',
  'Marcelo',
  'Bruno',
  'Eduardo',
  'Felipe',
  'Raimundo',
  'Rodrigo',
  'Antônia',
  'Adriana',
  'Juliana',
  'Márcia',
  'Fernanda',
  'Patrícia',
  'Aline',
  'Sandra',
  'Camila',
  'Amanda',
  'Bruna',
  'Jéssica',
  'Letícia',
  'Júlia',
  'Luciana',
  'Vanessa',
  'Mariana',
  'Gabriela',
  'Vitória',
  'Larissa',
  'Cecília',
  'Conceição',
  'Sebastião',
  'Thaís',
  'Vinícius',
  'Caio',
  'Joaquim',
];
const SURNAMES = [
  'Santos',
  'Oliveira',
  'Souza',
  'Rodrigues',
  'Ferreira',
  'Alves',
  'Pereira',
  'Lima',
  'Gomes',
  'Costa',
  'Ribeiro',
  'Martins',
  'Carvalho',
  'Almeida',
  'Lopes',
  'Soares',
  'Fernandes',
  'Vieira',
  'Barbosa',
  'Rocha',
  'Dias',
  'Nascimento',
  'Andrade',
  'Moreira',
  'Nunes',
  'Marques',
  'Machado',
  'Mendes',
  'Freitas',
  'Cardoso',
  'Ramos',
  'Gonçalves',
  'Araújo',
  'Conceição',
  'Brandão',
  'Magalhães',
  'Simões',
];
const COMMON = 'Silva';
const COMPANIES = [
  'Padaria São Jorge',
  'Açaí do Pará',
  'Construtora Ipê',
  'Óticas Visão',
  'Farmácia Popular',
  'Auto Peças Irmãos',
  'Café Três Corações',
  'Clínica Saúde & Vida',
  'Escola Aprender',
  'Mercadinho Bom Preço',
];
const DOMAINS = ['gmail.com', 'hotmail.com', 'outlook.com', 'yahoo.com.br', 'uol.com.br', 'bol.com.br', 'empresa.com.br', 'terra.com.br'];
/** The rare name: RARE_EVERY apart, so a handful of leads over the whole table. */
const RARE = { nome: 'Iolanda Quaresma', every: 250_000 };

function parseArgs(argv) {
  const options = { rows: 1_000_000, duration: 10, keep: undefined, databases: ['sqlite', 'postgres'] };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    if (flag === '--rows') options.rows = Number(value());
    else if (flag === '--duration') options.duration = Number(value());
    else if (flag === '--keep') options.keep = value();
    else if (flag === '--databases') options.databases = value().split(',');
    else throw new Error(`Unknown option ${argv[i]}; see the head of bench/inbox.mjs`);
  }
  if (!Number.isInteger(options.rows) || options.rows < 1000) throw new Error('--rows needs a whole number of at least 1000');
  return options;
}

const plain = (text) => text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();

/** Lead i as a row: every fifth a Silva, a few the rare name, one in a hundred held. */
function lead(i) {
  const given = GIVEN[(i * 7) % GIVEN.length];
  const surname = i % 5 === 0 ? COMMON : SURNAMES[(i * 13) % SURNAMES.length];
  const second = SURNAMES[(i * 17 + 3) % SURNAMES.length];
  const nome = i % RARE.every === 4321 ? RARE.nome : `${given} ${second} ${surname}`;
  const email = `${plain(nome.split(' ')[0])}.${plain(surname)}${i % 1000}@${DOMAINS[i % DOMAINS.length]}`;
  const empresa = i % 3 ? `${COMPANIES[i % COMPANIES.length]} ${i % 500}` : null;
  const received = START_MS + i * STEP_MS;
  return { i, nome, email, empresa, received, held: i % 100 === 7 };
}

/** The SQLite file, seeded: rows in transactions of BATCH, then the FTS5 index from search_folded in one pass. */
function seedSqlite(file, rows) {
  const db = new Database(file);
  db.pragma('synchronous = OFF');
  db.exec('DROP TRIGGER leads_search_insert');
  const insert = db.prepare(`INSERT INTO leads (id, nome, email, email_folded, search_folded, empresa, mensagem, origem, channel, received_at,
    screening_verdict, screening_reasons, screening_decided_by, screening_decided_at, announced_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'screening', ?, ?)`);
  const sqliteTime = (ms) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
  const write = db.transaction((from, to) => {
    for (let i = from; i < to; i++) {
      const l = lead(i);
      const at = sqliteTime(l.received);
      insert.run(
        uuidV7Like(l.received, i),
        l.nome,
        l.email,
        l.email.toLowerCase(),
        searchDocument(l.nome, l.email, l.empresa),
        l.empresa,
        'Gostaria de um orçamento.',
        ['site', 'google-ads', 'instagram', null][i % 4],
        ['form', 'api', 'mcp', 'cli'][i % 4],
        at,
        l.held ? 'held' : 'accepted',
        l.held ? '["content_rules"]' : '[]',
        at,
        l.held ? null : at,
      );
    }
  });
  const began = performance.now();
  for (let from = 0; from < rows; from += BATCH) write(from, Math.min(rows, from + BATCH));
  db.exec(`INSERT INTO leads_search (rowid, words) SELECT rowid, search_folded FROM leads;
    INSERT INTO leads_search (leads_search) VALUES ('optimize');
    CREATE TRIGGER leads_search_insert AFTER INSERT ON leads WHEN new.search_folded IS NOT NULL BEGIN
      INSERT INTO leads_search (rowid, words) VALUES (new.rowid, new.search_folded); END;`);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.exec('ANALYZE');
  db.close();
  return (performance.now() - began) / 1000;
}

/** The same leads on PostgreSQL: multi-row INSERTs from arrays, the search index dropped meanwhile and made again. */
async function seedPostgres(client, rows) {
  const began = performance.now();
  const [index] = (
    await client.query(`SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'leads' AND indexname LIKE 'leads_search_%'`)
  ).rows;
  if (index) await client.query(`DROP INDEX ${index.indexdef.match(/INDEX (\S+)/)[1]}`);
  for (let from = 0; from < rows; from += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, rows - from) }, (_, k) => lead(from + k));
    await client.query(
      `INSERT INTO leads (id, nome, email, email_folded, search_folded, empresa, mensagem, origem, channel, received_at,
         screening_verdict, screening_reasons, screening_decided_by, screening_decided_at, announced_at)
       SELECT id, nome, email, lower(email), folded, empresa, 'Gostaria de um orçamento.', (ARRAY['site', 'google-ads', 'instagram', NULL])[i % 4 + 1],
         (ARRAY['form', 'api', 'mcp', 'cli'])[i % 4 + 1], to_timestamp(ms / 1000.0), CASE WHEN held THEN 'held' ELSE 'accepted' END,
         CASE WHEN held THEN '["content_rules"]' ELSE '[]' END, 'screening', to_timestamp(ms / 1000.0), CASE WHEN held THEN NULL ELSE to_timestamp(ms / 1000.0) END
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::float8[], $7::bool[], $8::int[])
         AS s (id, nome, email, folded, empresa, ms, held, i)`,
      [
        batch.map((l) => uuidV7Like(l.received, l.i)),
        batch.map((l) => l.nome),
        batch.map((l) => l.email),
        batch.map((l) => searchDocument(l.nome, l.email, l.empresa)),
        batch.map((l) => l.empresa),
        batch.map((l) => l.received),
        batch.map((l) => l.held),
        batch.map((l) => l.i),
      ],
    );
  }
  if (index) await client.query(index.indexdef);
  await client.query('VACUUM ANALYZE leads');
  return { seconds: (performance.now() - began) / 1000, index: index?.indexdef.match(/INDEX (\S+)/)[1] ?? 'none' };
}

/** One closed loop for `seconds` (after one second of warm-up); `once()` resolves to its latency in ms. */
async function loop(once, seconds) {
  for (const until = performance.now() + 1000; performance.now() < until;) await once();
  const latencies = [];
  for (const until = performance.now() + seconds * 1000; performance.now() < until;) latencies.push(await once());
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), n: latencies.length };
}

/**
 * LeadReader.countUpTo's SQL for a filter (src/leads/lead-reader.service.ts): accepted leads, optionally those a search
 * finds, up to the cap + 1. A word one in 20 of the newest 4,000 leads has is counted by reading search_folded in list
 * order, a rarer one through the index (FTS5 on SQLite; on PostgreSQL LIKE, which pg_trgm's index serves).
 */
async function countSql(sqlite, q, first) {
  const accepted = `SELECT search_folded FROM leads WHERE screening_verdict = 'accepted'`;
  if (q === undefined) return `SELECT COUNT(*) AS n FROM (${accepted} LIMIT ${COUNT_CAP + 1}) AS counted`;
  const words = q.split(/\s+/).map(plain).join(' ');
  const like = `search_folded LIKE '% ${words}%'`;
  if (!sqlite) return `SELECT COUNT(*) AS n FROM (${accepted} AND ${like} LIMIT ${COUNT_CAP + 1}) AS counted`;
  const recent = await first(`SELECT COUNT(*) AS n FROM (${accepted} ORDER BY received_at DESC, id DESC LIMIT 4000) WHERE ${like}`);
  const search = recent * 20 >= 4000 ? like : `rowid IN (SELECT rowid FROM leads_search WHERE leads_search MATCH '"${words}"*')`;
  return `SELECT COUNT(*) AS n FROM (${accepted} AND ${search} LIMIT ${COUNT_CAP + 1}) AS counted`;
}

/**
 * A viewer's inbox session, written as InboxSessions would (only the SHA-256 of its id stored): the cookie that carries
 * it. `exec` runs one statement on the service's database.
 */
async function inboxCookie(exec) {
  const id = randomBytes(32).toString('base64url');
  const person = randomUUID();
  const now = Date.now();
  await exec(`INSERT INTO inbox_people (id, email, email_folded, role, created_at, updated_at)
    VALUES ('${person}', 'bench.${person}@example.com', 'bench.${person}@example.com', 'viewer', ${now}, ${now})`);
  await exec(`INSERT INTO inbox_sessions (id_hash, person_id, created_at, last_seen_at, expires_at)
    VALUES ('${createHash('sha256').update(id).digest('hex')}', '${person}', ${now}, ${now}, ${now + 86_400_000})`);
  return `inbox_session=${id}`;
}

async function measure(database, service, count, duration, exec) {
  const headers = { authorization: `Bearer ${await operatorToken(service, 'bench inbox', 'leads:read')}` };
  const cookie = { cookie: await inboxCookie(exec) };
  // A fresh keep-alive connection per target: one left idle while the counts ran would be closed by the server.
  let agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const rest = (query, check) => async () => {
    const res = await get(agent, service.base, `/api/v1/leads?limit=${PAGE}${query}`, headers);
    if (res.status !== 200) throw new Error(`${query}: ${res.status} ${res.body.toString().slice(0, 300)}`);
    check(JSON.parse(res.body).data.length);
    return res.ms;
  };
  // The page's rows: one <tr> each, beside the header's.
  const inbox = (query, check) => async () => {
    const res = await get(agent, service.base, `/inbox/leads${query}`, cookie);
    if (res.status !== 200) throw new Error(`/inbox/leads${query}: ${res.status} ${res.body.toString().slice(0, 300)}`);
    check(res.body.toString().split('<tr').length - 2);
    return res.ms;
  };
  const timed = (run) => async () => {
    const started = performance.now();
    await run();
    return performance.now() - started;
  };
  const rareQ = plain(RARE.nome).split(' ')[1];
  const targets = [
    ['leads page: first page (REST)', rest('', (n) => n === PAGE || fail('a short first page'))],
    ['leads page: count up to 10,000', timed(() => count(undefined))],
    [`search, rare name: q=${rareQ} (REST)`, rest(`&q=${rareQ}`, (n) => (n > 0 && n < 10) || fail(`rare: ${n} leads`))],
    [`search, rare name: count`, timed(() => count(rareQ))],
    [`search, common name: q=${plain(COMMON)} (REST)`, rest(`&q=${plain(COMMON)}`, (n) => n === PAGE || fail(`common: ${n} leads`))],
    [`search, common name: count`, timed(() => count(plain(COMMON)))],
    [`search, two common words: q=maria silva (REST)`, rest('&q=maria%20silva', (n) => n > 0 || fail('maria silva: none'))],
    [`search, one letter: q=a (REST)`, rest('&q=a', (n) => n === PAGE || fail('a: short page'))],
    ['inbox page: first page (GET /inbox/leads)', inbox('', (n) => n === PAGE || fail(`inbox: ${n} rows`))],
    [`inbox page, rare name: q=${rareQ}`, inbox(`?q=${rareQ}`, (n) => (n > 0 && n < 10) || fail(`inbox rare: ${n} rows`))],
    [`inbox page, common name: q=${plain(COMMON)}`, inbox(`?q=${plain(COMMON)}`, (n) => n === PAGE || fail(`inbox common: ${n} rows`))],
  ];
  const lines = [];
  for (const [name, once] of targets) {
    agent.destroy();
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const result = await loop(once, duration);
    lines.push({ database, name, ...result });
    console.error(`${database} ${name}: p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms (${result.n} requests)`);
  }
  agent.destroy();
  return lines;
}

const fail = (message) => {
  throw new Error(message);
};

async function onSqlite(opts) {
  const dataDir = opts.keep ?? mkdtempSync(join(tmpdir(), 'bench-inbox-'));
  let service;
  try {
    let seconds = 0;
    if (!existsSync(join(dataDir, 'leads.sqlite'))) {
      mkdirSync(dataDir, { recursive: true });
      await (await startService(dataDir)).stop(); // the migrations make the schema
      seconds = seedSqlite(join(dataDir, 'leads.sqlite'), opts.rows);
    }
    console.error(`SQLite: seeded ${opts.rows} leads in ${seconds.toFixed(1)} s`);
    service = await startService(dataDir);
    const db = new Database(join(dataDir, 'leads.sqlite'), { readonly: true });
    db.pragma('mmap_size = 4294967296'); // as the service's connection (src/database/data-source.ts)
    const statements = new Map();
    const first = (sql) => {
      if (!statements.has(sql)) statements.set(sql, db.prepare(sql));
      return statements.get(sql).get().n;
    };
    const count = async (q) => first(await countSql(true, q, first));
    const exec = (sql) => {
      const writer = new Database(join(dataDir, 'leads.sqlite'));
      writer.pragma('busy_timeout = 5000');
      writer.exec(sql);
      writer.close();
    };
    try {
      return { seconds, index: 'leads_search (FTS5)', lines: await measure('SQLite', service, count, opts.duration, exec) };
    } finally {
      db.close();
    }
  } finally {
    await service?.stop();
    if (!opts.keep) rmSync(dataDir, { recursive: true, force: true });
  }
}

async function onPostgres(opts) {
  const database = await freshDatabase('postgres', 'inbox');
  const admin = new pg.Client({ connectionString: database.env.DATABASE_URL });
  await admin.connect();
  let service;
  try {
    service = await startService(database.dataDir, { ...database.env, SECRETS_KEY: randomBytes(32).toString('base64') });
    const { seconds, index } = await seedPostgres(admin, opts.rows);
    console.error(`PostgreSQL: seeded ${opts.rows} leads in ${seconds.toFixed(1)} s (search index ${index})`);
    const count = async (q) => (await admin.query(await countSql(false, q))).rows[0].n;
    return { seconds, index, lines: await measure('PostgreSQL', service, count, opts.duration, (sql) => admin.query(sql)) };
  } finally {
    await service?.stop();
    await admin.end();
    await database.drop();
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const load1 = loadavg()[0];
  const sqlite = opts.databases.includes('sqlite') ? await onSqlite(opts) : { seconds: 0, lines: [] };
  const postgres = process.env.TEST_DATABASE_URL && opts.databases.includes('postgres') ? await onPostgres(opts) : undefined;
  const gitRev = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  const f = (n) => n.toFixed(1);
  console.log(
    [
      `## Inbox benchmark, ${new Date().toISOString()} (${gitRev}, Node ${process.version}, ${cpus().length} × ${cpus()[0].model.trim()})`,
      '',
      `\`node bench/inbox.mjs --rows ${opts.rows} --duration ${opts.duration}\`${hasTaskset ? '; service pinned to CPU 0' : ''}; one connection; ` +
        `load average ${load1.toFixed(2)} at the start, ${loadavg()[0].toFixed(2)} at the end. SQLite: seeded in ${sqlite.seconds.toFixed(0)} s. ` +
        (postgres ? `PostgreSQL: seeded in ${postgres.seconds.toFixed(0)} s, search index ${postgres.index}.` : 'PostgreSQL: not run (no TEST_DATABASE_URL).'),
      '',
      `| database | target | requests | p50 ms | p99 ms | p99 ≤ ${BAR_MS} ms |`,
      '|---|---|--:|--:|--:|:-:|',
      ...[...sqlite.lines, ...(postgres?.lines ?? [])].map(
        (l) => `| ${l.database} | ${l.name} | ${l.n} | ${f(l.p50)} | ${f(l.p99)} | ${l.p99 <= BAR_MS ? 'yes' : 'no'} |`,
      ),
    ].join('\n'),
  );
}

await main();
