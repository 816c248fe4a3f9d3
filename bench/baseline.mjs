// The bare limit of this machine for POST /api/v1/lead: node:http + better-sqlite3, doing the same validation
// (the service's own rules and ids, from the built dist/src), normalisation and insert, nothing else.
// With GROUP_COMMIT=1 the rows of one event-loop turn share one transaction, as the service's batched insert does.
// Usage: DATA_DIR=/tmp/x [GROUP_COMMIT=1] node bench/baseline.mjs [port]   (PORT from the environment when no argument is given)
import { createServer } from 'node:http';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate } from 'node:timers';
import { TextDecoder } from 'node:util';
import Database from 'better-sqlite3';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { uuidv7 } from '../dist/src/database/uuid-v7.js';
import { LEAD_FIELDS, fieldFailure, normaliseEmail } from '../dist/src/leads/lead-rules.js';

const BODY_LIMIT_BYTES = 16 * 1024;
const port = Number(process.argv[2] ?? process.env.PORT ?? 3100);
const dataDir = process.env.DATA_DIR ?? './data-baseline';
mkdirSync(dataDir, { recursive: true });

const db = new Database(join(dataDir, 'baseline.sqlite'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('busy_timeout = 5000');
// The columns of migrations/1763800000000-initial-schema.ts (SQLite flavour).
db.exec(`
  CREATE TABLE IF NOT EXISTS leads (
    id varchar(36) PRIMARY KEY,
    nome varchar(512) NOT NULL,
    email varchar(1024) NOT NULL,
    telefone varchar(128),
    telefone_e164 varchar(16),
    empresa varchar(512),
    mensagem text,
    origem varchar(256),
    received_at datetime NOT NULL
  );
  CREATE INDEX IF NOT EXISTS leads_received_at_idx ON leads (received_at);
`);
const insert = db.prepare(
  `INSERT INTO leads (id, nome, email, telefone, telefone_e164, empresa, mensagem, origem, received_at)
   VALUES (@id, @nome, @email, @telefone, @telefone_e164, @empresa, @mensagem, @origem, @received_at)`,
);

const insertTogether = db.transaction((rows) => {
  for (const row of rows) insert.run(row);
});
let pending = [];
function flush() {
  const batch = pending;
  pending = [];
  insertTogether(batch.map(([row]) => row));
  for (const [, reply] of batch) reply();
}
/** Stores the row, then replies: at once, or with GROUP_COMMIT after the turn's one commit. */
const store =
  process.env.GROUP_COMMIT === '1'
    ? (row, reply) => {
        if (pending.push([row, reply]) === 1) setImmediate(flush);
      }
    : (row, reply) => {
        insert.run(row);
        reply();
      };

const FIELD_NAMES = Object.keys(LEAD_FIELDS);
const utf8 = new TextDecoder('utf-8', { fatal: true });

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** One error per field, the most basic first, as the service reports (its own rules); returns the errors. */
function validate(body) {
  const errors = [];
  for (const key of Object.keys(body)) if (!Object.hasOwn(LEAD_FIELDS, key)) errors.push({ pointer: `/${key}`, code: 'unknown_field' });
  for (const field of FIELD_NAMES) {
    const code = fieldFailure(field, body[field]);
    if (code) errors.push({ pointer: `/${field}`, code });
  }
  return errors;
}

function normalise(body) {
  const clean = (field) => {
    const value = body[field];
    if (value === undefined || value === null) return null;
    const text = value.trim().normalize('NFC');
    return LEAD_FIELDS[field].collapseWhitespace ? text.replace(/\s+/gu, ' ') : text;
  };
  const telefone = clean('telefone');
  const phone = telefone === null ? undefined : parsePhoneNumberFromString(telefone, 'BR');
  return {
    nome: clean('nome'),
    email: normaliseEmail(body.email),
    telefone,
    telefone_e164: phone?.isValid() ? phone.number : null,
    empresa: clean('empresa'),
    mensagem: clean('mensagem'),
    origem: clean('origem'),
  };
}

function handleLead(req, res, raw) {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') return send(res, 415, { code: 'unsupported_media_type' });
  let body;
  try {
    body = JSON.parse(utf8.decode(raw));
  } catch {
    return send(res, 400, { code: 'malformed_json' });
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return send(res, 400, { code: 'body_not_object' });
  const errors = validate(body);
  if (errors.length) return send(res, 422, { code: 'validation_failed', errors });
  const receivedAt = new Date().toISOString();
  // Time-ordered ids, as the service's: each row's index entry lands beside the last one.
  const id = uuidv7();
  store({ id, ...normalise(body), received_at: receivedAt }, () => send(res, 201, { id, status: 'received', received_at: receivedAt }));
}

const server = createServer((req, res) => {
  const path = req.url.split('?')[0];
  if (req.method === 'GET' && path === '/api/v1/health') return send(res, 200, { status: 'ok' });
  if (req.method !== 'POST' || path !== '/api/v1/lead') return send(res, 404, { code: 'not_found' });
  const chunks = [];
  let size = 0;
  let tooLarge = false;
  req.on('data', (chunk) => {
    if (tooLarge) return;
    size += chunk.length;
    if (size > BODY_LIMIT_BYTES) {
      tooLarge = true;
      send(res, 413, { code: 'payload_too_large' });
      req.resume();
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (tooLarge) return;
    try {
      handleLead(req, res, Buffer.concat(chunks, size));
    } catch (error) {
      console.error(error);
      if (!res.headersSent) send(res, 500, { code: 'internal_error' });
    }
  });
});

const close = () =>
  server.close(() => {
    db.close();
    process.exit(0);
  });
process.on('SIGTERM', close);
process.on('SIGINT', close);
server.listen(port, () => console.log(`baseline listening on ${port}, data in ${dataDir}`));
