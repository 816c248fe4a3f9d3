import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Lead } from '../../src/leads/lead.entity.js';
import type { ScreeningReason, ScreeningVerdict } from '../../src/screening/screening.js';
import { storedLead } from './stored-leads.js';
import type { TestDatabase } from './database.js';
import type { TestApp } from './test-app.js';

/** The reasons a test lead of each verdict carries. */
const REASONS: Record<ScreeningVerdict, ScreeningReason[]> = { accepted: [], held: ['disposable_email'], spam: ['honeypot'] };

/**
 * Stores lead number `i` with a screening verdict as intake would have given it: held or spam leads never announced
 * (no lead.received). Straight into the table, so that a test chooses its time and reasons; intake's own verdicts are
 * tested through POST /api/v1/lead (test/screening.e2e-spec.ts, and "through intake" in test/lead-review.e2e-spec.ts).
 */
export async function storeScreenedLead(t: TestApp, i: number, verdict: ScreeningVerdict, fields: Partial<Lead> = {}): Promise<Lead> {
  const receivedAt = fields.receivedAt ?? new Date();
  const row = storedLead(i, {
    screeningVerdict: verdict,
    screeningReasons: REASONS[verdict],
    screeningDecidedAt: receivedAt,
    announcedAt: verdict === 'accepted' ? receivedAt : null,
    ...fields,
    receivedAt,
  });
  await t.dataSource.getRepository(Lead).insert(row);
  return row;
}

/**
 * Holds leads already stored (through the API, by a test that runs the service as a process), as intake would have held
 * them: verdict held for a disposable address, never announced. On SQLite through a connection of its own (the service
 * keeps running; WAL lets both write), on PostgreSQL through the test database's.
 */
export async function holdStoredLeads(database: TestDatabase, ids: readonly string[]): Promise<void> {
  const sql = `UPDATE leads SET screening_verdict = 'held', screening_reasons = '["disposable_email"]', announced_at = NULL WHERE id IN (${ids.map((id) => `'${id}'`).join(', ')})`;
  if (database.kind === 'postgres') {
    await database.query(sql);
    return;
  }
  const db = new Database(join(database.env.DATA_DIR, 'leads.sqlite'), { fileMustExist: true, timeout: 5000 });
  try {
    db.prepare(sql).run();
  } finally {
    db.close();
  }
}
