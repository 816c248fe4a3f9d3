// Read benchmark (issue 20): latency of GET /api/v1/leads pages of 50 over --rows stored leads. Not part of CI.
// Usage (after `npm run build`; `npm run bench:read -- …` builds when stale):
//   node bench/read.mjs [--rows 1000000] [--pg-rows N] [--duration 5] [--connections 1,10] [--skip 50000]
// On SQLite (seeded like bench/export.mjs), then on PostgreSQL when TEST_DATABASE_URL is set (a fresh schema, made by
// the service's migrations, seeded with one INSERT … SELECT FROM generate_series, dropped at the end; --pg-rows,
// default --rows). The service runs pinned to CPU 0; the client here runs closed loops (each connection sends its next
// request when the last one is answered) and times every request, for each scenario and each --connections: GET
// /api/v1/health (the baseline of the same server, same run), the first page, deep pages (each connection follows
// next_cursor from --skip leads in), and first pages filtered by origem, by one person's email, and by a since/until
// window. Prints p50/p99 and their ratio to health's. Target (issue 20): p99 ≤ 15 ms for a page of 50, on both databases.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { FREQUENT_EMAIL, get, hasTaskset, operatorToken, percentile, ROOT, SEED_START_MS, SEED_STEP_MS, seedSqlite, startService } from './support.mjs';

const PAGE = 50;

function parseArgs(argv) {
  const options = { rows: 1_000_000, pgRows: undefined, duration: 5, connections: [1, 10], skip: 50_000 };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    const number = (text = value()) => {
      const n = Number(text);
      if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} needs positive whole numbers`);
      return n;
    };
    if (flag === '--rows') options.rows = number();
    else if (flag === '--pg-rows') options.pgRows = number();
    else if (flag === '--duration') options.duration = number();
    else if (flag === '--skip') options.skip = number();
    else if (flag === '--connections') options.connections = value().split(',').map(number);
    else throw new Error(`Unknown option ${argv[i]}; see the head of bench/read.mjs`);
  }
  return options;
}

/**
 * `connections` closed loops for `seconds`; `next(state, previous)` gives each request's path from the connection's last
 * answer. Every answer must be 200 and pass `check`. Resolves to the latencies (ms) and requests per second.
 */
async function load(base, headers, scenario, connections, seconds) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const latencies = [];
  const until = performance.now() + seconds * 1000;
  const loop = async () => {
    let previous;
    while (performance.now() < until) {
      const res = await get(agent, base, scenario.next(previous), headers);
      if (res.status !== 200) throw new Error(`${scenario.name}: ${res.status} ${res.body.toString().slice(0, 300)}`);
      previous = JSON.parse(res.body);
      scenario.check?.(previous);
      latencies.push(res.ms);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: connections }, loop));
  const rps = latencies.length / ((performance.now() - started) / 1000);
  agent.destroy();
  return { latencies, rps };
}

const fullPage = (name) => (body) => {
  if (body.data.length !== PAGE) throw new Error(`${name}: a page of ${body.data.length} leads, not ${PAGE}`);
};

/** The scenarios over `rows` seeded leads; `deepCursor` is the next_cursor after --skip leads without filters. */
function scenarios(rows, deepCursor) {
  const iso = (i) => new Date(SEED_START_MS + i * SEED_STEP_MS).toISOString();
  // A window over the middle third of the leads.
  const window = `since=${iso(Math.floor(rows / 3))}&until=${iso(Math.floor((2 * rows) / 3))}`;
  const persons = Math.ceil(rows / 10_000); // FREQUENT_EMAIL's leads (support.mjs)
  const leads = `/api/v1/leads?limit=${PAGE}`;
  return [
    { name: 'GET /api/v1/health (baseline)', next: () => '/api/v1/health', anonymous: true },
    { name: 'first page, no filters', next: () => leads, check: fullPage('first page') },
    {
      name: 'deep pages (following next_cursor)',
      // From the deep cursor again at the end of the list.
      next: (previous) => `${leads}&cursor=${previous?.next_cursor ?? deepCursor}`,
      check: (body) => body.next_cursor === null || fullPage('deep page')(body),
    },
    { name: 'origem=linkedin', next: () => `${leads}&origem=linkedin`, check: fullPage('origem') },
    {
      name: `email (one person, ${persons} leads)`,
      next: () => `${leads}&email=${encodeURIComponent(FREQUENT_EMAIL.toLowerCase())}`,
      check: (body) => {
        if (body.data.length !== Math.min(PAGE, persons)) throw new Error(`email: ${body.data.length} leads, not ${Math.min(PAGE, persons)}`);
      },
    },
    { name: 'since/until (middle third)', next: () => `${leads}&${window}`, check: fullPage('since/until') },
  ];
}

/** The next_cursor after `skip` leads in list order, walked in pages of 200. */
async function cursorAfter(base, headers, skip) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let cursor;
  for (let walked = 0; walked < skip; walked += 200) {
    const res = await get(agent, base, `/api/v1/leads?limit=200${cursor ? `&cursor=${cursor}` : ''}`, headers);
    if (res.status !== 200) throw new Error(`walking the list: ${res.status} ${res.body.toString().slice(0, 300)}`);
    cursor = JSON.parse(res.body).next_cursor;
  }
  agent.destroy();
  return cursor;
}

/** Every scenario at each connection count against one seeded, running service; rows for the table. */
async function measure(database, service, rows, opts) {
  const headers = { authorization: `Bearer ${await operatorToken(service, 'bench read', 'leads:read')}` };
  const deepCursor = await cursorAfter(service.base, headers, opts.skip);
  const lines = [];
  for (const connections of opts.connections) {
    let health;
    for (const scenario of scenarios(rows, deepCursor)) {
      const scenarioHeaders = scenario.anonymous ? {} : headers;
      await load(service.base, scenarioHeaders, scenario, connections, 1); // warm-up
      const { latencies, rps } = await load(service.base, scenarioHeaders, scenario, connections, opts.duration);
      const line = { database, scenario: scenario.name, connections, rps, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
      health ??= line;
      lines.push({ ...line, p50Ratio: line.p50 / health.p50, p99Ratio: line.p99 / health.p99 });
      console.error(`${database} c=${connections} ${scenario.name}: p50 ${line.p50.toFixed(2)} ms, p99 ${line.p99.toFixed(2)} ms, ${Math.round(rps)} req/s`);
    }
  }
  return lines;
}

async function onSqlite(opts) {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-read-'));
  let service;
  try {
    await (await startService(dataDir)).stop(); // the migrations make the schema
    const seconds = seedSqlite(join(dataDir, 'leads.sqlite'), opts.rows);
    console.error(`SQLite: seeded ${opts.rows} leads in ${seconds.toFixed(1)} s`);
    service = await startService(dataDir);
    return { seconds, lines: await measure('SQLite', service, opts.rows, opts) };
  } finally {
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The same leads as seedSqlite in kind (ids are not UUIDv7-like; list order is by received_at first). */
const PG_SEED = `
  INSERT INTO leads (id, nome, email, email_folded, telefone, telefone_e164, empresa, mensagem, origem, channel, received_at)
  SELECT md5(i::text)::uuid, CASE WHEN i % 50 = 0 THEN '=HYPERLINK("http://x/' || i || '")' ELSE 'Maria Fernanda Souza ' || i END,
         email, lower(email),
         CASE WHEN i % 3 <> 0 THEN '+55 (11) 98765-4321' END, CASE WHEN i % 3 <> 0 THEN '+5511987654321' END,
         CASE WHEN i % 4 <> 0 THEN 'Souza, Filhos & Cia ' || (i % 1000) END,
         CASE WHEN i % 2 = 1 THEN E'Olá!\\nPodem me ligar? Pedido nº ' || i || '; "urgente"' ELSE 'Quero uma proposta para 30 posições de trabalho.' END,
         (ARRAY['site', 'google-ads', 'linkedin', 'bench', NULL])[i % 5 + 1], (ARRAY['api', 'form', 'mcp', 'cli'])[i % 4 + 1],
         to_timestamp($1::double precision / 1000) + i * ($2 || ' milliseconds')::interval
  FROM (SELECT i, CASE WHEN i % 10000 = 1 THEN $3 ELSE 'Lead' || i || '@example' || (i % 97) || '.com.br' END AS email
        FROM generate_series(0, $4::int - 1) AS i) AS s`;

async function onPostgres(opts) {
  const rows = opts.pgRows ?? opts.rows;
  const schema = `bench_read_${process.pid}`;
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await admin.connect();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-read-pg-'));
  let service;
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
    const url = new URL(process.env.TEST_DATABASE_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    // Its migrations make the schema; SECRETS_KEY is required on PostgreSQL (any key: the schema is new).
    service = await startService(dataDir, { DATABASE_URL: url.toString(), SECRETS_KEY: randomBytes(32).toString('base64') });
    const began = performance.now();
    await admin.query(`SET search_path = ${schema}`);
    await admin.query(PG_SEED, [SEED_START_MS, SEED_STEP_MS, FREQUENT_EMAIL, rows]);
    await admin.query('VACUUM ANALYZE leads');
    const seconds = (performance.now() - began) / 1000;
    console.error(`PostgreSQL: seeded ${rows} leads in ${seconds.toFixed(1)} s`);
    return { rows, seconds, lines: await measure('PostgreSQL', service, rows, opts) };
  } finally {
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const load1 = loadavg()[0];
  const sqlite = await onSqlite(opts);
  const postgres = process.env.TEST_DATABASE_URL ? await onPostgres(opts) : undefined;
  const gitRev = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  const f = (n) => n.toFixed(2);
  console.log(
    [
      `## Read benchmark, ${new Date().toISOString()} (${gitRev}, Node ${process.version}, ${cpus().length} × ${cpus()[0].model.trim()})`,
      '',
      `\`node bench/read.mjs --rows ${opts.rows}${opts.pgRows ? ` --pg-rows ${opts.pgRows}` : ''} --duration ${opts.duration} --connections ${opts.connections.join(',')} --skip ${opts.skip}\`` +
        `${hasTaskset ? '; service pinned to CPU 0, the client not pinned' : ''}; load average ${load1.toFixed(2)} at the start, ${loadavg()[0].toFixed(2)} at the end.`,
      `SQLite: ${opts.rows} leads seeded in ${sqlite.seconds.toFixed(1)} s.` +
        (postgres
          ? ` PostgreSQL (TEST_DATABASE_URL, a fresh schema): ${postgres.rows} leads seeded in ${postgres.seconds.toFixed(1)} s.`
          : ' PostgreSQL: not run (no TEST_DATABASE_URL).'),
      '',
      '| database | scenario | connections | req/s | p50 ms | p99 ms | p50 × health | p99 × health | p99 ≤ 15 ms |',
      '|---|---|--:|--:|--:|--:|--:|--:|:-:|',
      ...[...sqlite.lines, ...(postgres?.lines ?? [])].map(
        (l) =>
          `| ${l.database} | ${l.scenario} | ${l.connections} | ${Math.round(l.rps)} | ${f(l.p50)} | ${f(l.p99)} | ${f(l.p50Ratio)} | ${f(l.p99Ratio)} | ` +
          `${l.scenario.includes('health') ? '' : l.p99 <= 15 ? 'yes' : 'no'} |`,
      ),
    ].join('\n'),
  );
}

await main();
