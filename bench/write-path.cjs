// node bench/write-path.cjs BEFORE.sql AFTER.sql: the SQLite work of storing leads, and with them one e-mail recipient's
// outbox rows, on two schemas (each the `SELECT sql FROM sqlite_master` of leads, webhook_messages and
// webhook_deliveries after a tree's migrations), better-sqlite3 alone, no service: CPU µs per lead (value building
// included, the same on every side), 50-lead transactions as LeadWriter's group commit, 40,000 leads per side, 5 rounds
// alternated. "fanout": the lead's transaction writes its message undispatched, the fan-out's transaction then selects
// it, writes the delivery and sets dispatched_at (main before 2026-11-28); "inline": the delivery in the lead's
// transaction and the message written dispatched (Outbox on SQLite since).
const Database = require('better-sqlite3');
const fs = require('fs');
const { randomUUID } = require('crypto');
// Ids as the service makes them (src/database/uuid-v7.ts): time first. Random v4 ids, as this script used before
// 2026-11-28T12:50Z, put every key of the primary-key indexes on a random page and inflated every figure about 1.5-3×.
const uuidv7 = (now) =>
  `${now
    .toString(16)
    .padStart(12, '0')
    .replace(/^(.{8})/, '$1-')}-7${randomUUID().slice(15)}`;
const [before, after] = process.argv.slice(2);
const schemas = { before: fs.readFileSync(before, 'utf8'), after: fs.readFileSync(after, 'utf8') };
const COLS =
  'id, nome, email, telefone, telefone_e164, empresa, mensagem, origem, received_at, registration_id, channel, client_id, email_folded, legal_bases, consent_text_sha256, context, screening_verdict, screening_reasons, screening_decided_by, screening_decided_at, announced_at';
const iso = (ms) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
let clock = Date.parse('2026-11-28T00:00:00Z');
function lead(i) {
  const at = iso(clock++),
    id = uuidv7(clock);
  return [
    id,
    `Pessoa ${i} Souza`,
    `p${i}@exemplo.com.br`,
    '+55 11 98888-7777',
    '+5511988887777',
    'Empresa X',
    `Quero uma proposta ${i}`,
    'site',
    at,
    null,
    'api',
    null,
    `p${i}@exemplo.com.br`,
    null,
    null,
    null,
    'accepted',
    '[]',
    'screening',
    at,
    at,
  ];
}
function run(schema, mode, n) {
  const f = require('path').join(require('os').tmpdir(), `write-path-${process.pid}-${Math.random()}.sqlite`);
  const db = new Database(f);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('secure_delete = ON');
  db.exec(schemas[schema]);
  const endpoint = randomUUID();
  const insLeads = db.prepare(
    `INSERT INTO leads (${COLS}) VALUES ${Array(50)
      .fill(
        `(${COLS.split(',')
          .map(() => '?')
          .join(',')})`,
      )
      .join(',')}`,
  );
  const insMsgs = db.prepare(
    `INSERT INTO webhook_messages (id, event_type, payload, lead_id, endpoint_id, created_at, dispatched_at) VALUES ${Array(50).fill('(?,?,?,?,NULL,?,?)').join(',')}`,
  );
  const insDel = db.prepare(
    `INSERT INTO webhook_deliveries (message_id, endpoint_id, channel, message_created_at, state, attempts, step, next_attempt_at, lease_owner, lease_until, updated_at) VALUES ${Array(50).fill("(?,?,'email',?,'pending',0,0,?,NULL,NULL,?)").join(',')}`,
  );
  const sel = db.prepare('SELECT id, event_type, endpoint_id, created_at FROM webhook_messages WHERE dispatched_at IS NULL ORDER BY id LIMIT 200');
  const upd = db.prepare(`UPDATE webhook_messages SET dispatched_at = ? WHERE id IN (${Array(50).fill('?').join(',')})`);
  const leadTx = db.transaction((l, m, d) => {
    insLeads.run(l);
    if (m) insMsgs.run(m);
    if (d) insDel.run(d);
  });
  const fanTx = db.transaction((now) => {
    const ms = sel.all();
    const d = [];
    for (const x of ms) d.push(x.id, endpoint, x.created_at, now, now);
    insDel.run(d);
    upd.run([now, ...ms.map((x) => x.id)]);
  });
  const start = process.cpuUsage();
  for (let i = 0; i < n; i += 50) {
    const l = [],
      m = [],
      d = [],
      now = Date.now();
    for (let k = i; k < i + 50; k++) {
      const row = lead(k);
      l.push(...row);
      const mid = `msg_${uuidv7(now).replaceAll('-', '')}`;
      m.push(
        mid,
        'lead.received',
        JSON.stringify({ type: 'lead.received', timestamp: row[8], data: Object.fromEntries(COLS.split(', ').map((c, j) => [c, row[j]])) }),
        row[0],
        now,
        mode === 'inline' ? now : null,
      );
      d.push(mid, endpoint, now, now, now);
    }
    if (mode === 'none') leadTx(l);
    else if (mode === 'inline') leadTx(l, m, d);
    else {
      leadTx(l, m);
      fanTx(now);
    }
  }
  const u = process.cpuUsage(start);
  db.close();
  for (const x of ['', '-wal', '-shm']) fs.rmSync(f + x, { force: true });
  return (u.user + u.system) / n;
}
const cases = [
  ['before', 'none'],
  ['after', 'none'],
  ['before', 'fanout'],
  ['after', 'inline'],
];
const res = Object.fromEntries(cases.map(([s, m]) => [`${s}/${m}`, []]));
for (let r = 0; r < 5; r++) for (const [s, m] of cases) res[`${s}/${m}`].push(run(s, m, 40000).toFixed(1));
const med = (a) => [...a].map(Number).sort((x, y) => x - y)[Math.floor(a.length / 2)];
for (const [k, v] of Object.entries(res)) console.log(k.padEnd(12), v.join(' / '), ' median', med(v));
