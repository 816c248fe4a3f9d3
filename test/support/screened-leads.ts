import { Lead } from '../../src/leads/lead.entity.js';
import type { ScreeningReason, ScreeningVerdict } from '../../src/screening/screening.js';
import { storedLead } from './stored-leads.js';
import type { TestApp } from './test-app.js';

/** The reasons a test lead of each verdict carries. */
const REASONS: Record<ScreeningVerdict, ScreeningReason[]> = { accepted: [], held: ['disposable_email'], spam: ['honeypot'] };

/**
 * Stores lead number `i` with a screening verdict as intake would have given it: held or spam leads never announced
 * (no lead.received). Rows go straight into the table until intake screening holds leads on its own; then this is the
 * one place to switch to sending them through POST /api/v1/lead.
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
