import { setImmediate as nextTurn } from 'node:timers/promises';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';
import { SQLITE_BUSY_TIMEOUT_MS } from '../database/data-source.js';
import { StepTransactions, Steps } from '../database/step-transaction.js';
import { REGISTRATIONS_NAMING, RegistrationNamingAddress, takeRegistrationsNaming } from '../identity/registration-addresses.js';
import { Lead } from '../leads/lead.entity.js';
import { ERASED_SCOPE, erasedKey } from '../leads/idempotency.service.js';
import { foldEmail } from '../leads/lead-rules.js';
import { verdictCondition } from '../leads/lead-reader.service.js';
import { safeError } from '../logging/safe-error.js';
import { MAILER, Mailer } from '../mail/mailer.js';
import { OUTBOX_TABLES } from '../outbox/outbox-store.js';
import { Outbox } from '../outbox/outbox.service.js';
import { SecretBox } from '../secrets/secret-box.js';
import type { ScreeningVerdict } from '../screening/screening.js';

/** Leads erased per transaction: one person's leads are usually one batch; retention takes the expired ones in these steps. */
export const ERASURE_BATCH = 100;

/** SQLite: WAL checkpoints tried before an erasure answers `scrubbed: false` (a reader holds the WAL), and the wait before each retry. */
const CHECKPOINT_ATTEMPTS = 5;
const CHECKPOINT_RETRY_MS = 50;
/** The tables an erasure deletes from or rewrites: PostgreSQL's VACUUM after it. */
const ERASED_TABLES = ['leads', ...OUTBOX_TABLES, 'consent_texts', 'idempotency_keys', 'agent_registrations'];
/** A VACUUM may take long on big tables; it runs off the request path, so the pool's 10 s bound is lifted for it. */
const VACUUM_TIMEOUT_MS = 60 * 60 * 1000;

export type ErasureReason = 'data_subject_request' | 'retention';

/**
 * Which leads: one person's (the case-folded address, every verdict), or those received before a time (of one screening
 * verdict only when `verdict` says so: spam has its own, shorter retention).
 */
export type ErasureSelection = { emailFolded: string } | { receivedBefore: Date; verdict?: ScreeningVerdict };

export interface ErasureCounts {
  leads: number;
  webhook_messages: number;
  webhook_deliveries: number;
  webhook_attempts: number;
  consent_texts: number;
  idempotency_keys: number;
  agent_registrations: number;
}

export interface ErasedBatch {
  leadIds: string[];
  counts: ErasureCounts;
}

/** Statements that record a batch (its audit row) in the batch's own transaction, run after its deletes. */
export type BatchRecord = (batch: ErasedBatch) => Steps<void>;

/** What an erased idempotency key holds for its lead: no lead (the column is a NOT NULL uuid on PostgreSQL). */
export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

export const NO_ERASURE: ErasureCounts = {
  leads: 0,
  webhook_messages: 0,
  webhook_deliveries: 0,
  webhook_attempts: 0,
  consent_texts: 0,
  idempotency_keys: 0,
  agent_registrations: 0,
};

export function addCounts(a: ErasureCounts, b: ErasureCounts): ErasureCounts {
  return Object.fromEntries(Object.entries(a).map(([name, n]) => [name, n + b[name as keyof ErasureCounts]])) as unknown as ErasureCounts;
}

/**
 * The one erasure path, for data-subject requests and retention alike (docs/decisions/0029-data-subject-requests.md):
 * a batch of leads and everything that refers to them, in one transaction, with the `lead.erased` event in the same
 * transaction. On PostgreSQL the batch's leads are locked first: retention skips those another instance holds (SKIP
 * LOCKED, so instances take disjoint batches); a request waits for them, so that its answer counts every lead.
 */
@Injectable()
export class LeadEraser {
  private readonly logger = new Logger('Erasure');
  private readonly receivedAt: ColumnMetadata;
  /** The VACUUM under way, and whether another erasure finished meanwhile (one more VACUUM then, not one each). */
  private vacuuming?: Promise<void>;
  private vacuumAgain = false;

  private readonly sql: StepTransactions;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly outbox: Outbox,
    private readonly box: SecretBox,
    @Inject(MAILER) private readonly mailer: Mailer,
  ) {
    this.sql = new StepTransactions(dataSource);
    this.receivedAt = dataSource.getMetadata(Lead).findColumnWithPropertyName('receivedAt')!;
  }

  /**
   * Erases up to ERASURE_BATCH leads of the selection; with `registrationsOf`, also clears that address (case-folded)
   * from agent registrations; with `record`, writes what it removed (the audit) in the same transaction, so that a
   * process killed at any point leaves no erased lead unrecorded. Returns what it removed; no lead left means the
   * selection is done.
   */
  async eraseBatch(selection: ErasureSelection, reason: ErasureReason, registrationsOf?: string, record?: BatchRecord): Promise<ErasedBatch> {
    const now = Date.now();
    const cutoff = 'receivedBefore' in selection ? this.dataSource.driver.preparePersistentValue(selection.receivedBefore, this.receivedAt) : undefined;
    const result = await this.sql.run(
      function* (this: LeadEraser) {
        const batch = yield* this.batchSteps(selection, cutoff, reason, now, registrationsOf);
        if (record && (batch.leadIds.length || batch.counts.agent_registrations)) yield* record(batch);
        return batch;
      }.bind(this),
    );
    this.outbox.forget(result.messageIds);
    if (result.leadIds.length) {
      this.outbox.wake();
      // Without SMTP_URL the e-mails that carried these leads are files; they go with the leads.
      await this.mailer.forgetLeads(result.leadIds);
    }
    return { leadIds: result.leadIds, counts: result.counts };
  }

  /**
   * After an erasure, what its deletes left on disk. SQLite: the deleted bytes were zeroed in the pages (the connection
   * runs with secure_delete on: data-source.ts); the WAL still holds the old pages, so it is checkpointed into the file and truncated. A reader in
   * another process can hold the WAL: the checkpoint does not wait for it (busy_timeout 0, the event loop stays free) but
   * is tried again a few times. True when the WAL was emptied. PostgreSQL neither zeroes dead tuples nor its WAL: a VACUUM
   * of the touched tables is started, not awaited (errors logged), and the answer is false (/docs/privacy says what
   * remains and for how long).
   */
  async scrub(): Promise<boolean> {
    if (this.sql.postgres) {
      this.vacuumSoon();
      return false;
    }
    const db = this.sql.sqlite();
    for (let attempt = 1; attempt <= CHECKPOINT_ATTEMPTS; attempt++) {
      db.pragma('busy_timeout = 0');
      try {
        const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
        if (result?.busy === 0) return true;
      } catch (error) {
        // The leads are erased already: a checkpoint that fails answers scrubbed: false, not an error.
        if ((error as { code?: string }).code !== 'SQLITE_BUSY') this.logger.warn({ error: safeError(error) }, 'WAL checkpoint after an erasure failed');
      } finally {
        db.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
      }
      if (attempt < CHECKPOINT_ATTEMPTS) await new Promise((resolve) => setTimeout(resolve, CHECKPOINT_RETRY_MS * attempt));
    }
    return false;
  }

  /** One VACUUM of the erased tables after the current tick (after the answer is written); one at a time. */
  private vacuumSoon(): void {
    if (this.vacuuming) {
      this.vacuumAgain = true;
      return;
    }
    this.vacuuming = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.vacuum())
      .catch((error: unknown) => this.logger.warn({ error: safeError(error) }, 'VACUUM after an erasure failed'))
      .finally(() => {
        this.vacuuming = undefined;
        if (this.vacuumAgain) {
          this.vacuumAgain = false;
          this.vacuumSoon();
        }
      });
  }

  private async vacuum(): Promise<void> {
    const runner = this.dataSource.createQueryRunner();
    try {
      const client = (await runner.connect()) as { query(config: { text: string; query_timeout: number }): Promise<unknown> };
      await client.query({ text: 'SET statement_timeout = 0', query_timeout: VACUUM_TIMEOUT_MS });
      await client.query({ text: `VACUUM ${ERASED_TABLES.join(', ')}`, query_timeout: VACUUM_TIMEOUT_MS });
      await client.query({ text: 'RESET statement_timeout', query_timeout: VACUUM_TIMEOUT_MS });
    } finally {
      await runner.release();
    }
  }

  /** The VACUUM under way, if any (tests, shutdown). */
  async vacuumed(): Promise<void> {
    while (this.vacuuming) await this.vacuuming;
  }

  /**
   * What erasing one person's leads (the case-folded address) would remove now, and the address from agent
   * registrations, without a transaction: read-only counting queries over the person's leads in the erasure's own
   * batches and order (keyset on `(received_at, id)` descending, the `email_folded` index's), a turn of the event loop
   * between batches, and the consent wordings counted at the end among those the leads named. Nothing changes (no
   * event, no webhook message is forgotten); test/data-subject-requests.e2e-spec.ts holds its answer to the erasure's.
   */
  async dryRun(emailFolded: string): Promise<ErasedBatch> {
    const store = this.sql;
    const p = store.p.bind(store);
    const counts = { ...NO_ERASURE };
    const registrations = await store.query<RegistrationNamingAddress>(REGISTRATIONS_NAMING(p), [emailFolded]);
    counts.agent_registrations = registrations.filter((row) => withoutAddress(row, emailFolded) !== undefined).length;
    const leadIds: string[] = [];
    const wordings = new Set<string>();
    for (let after: [unknown, string] | undefined; ;) {
      const rows = await store.query<{ id: string; received_at: unknown; consent_text_sha256: string | null }>(
        `SELECT id, received_at, consent_text_sha256 FROM leads WHERE email_folded = ${p(1)}${after ? ` AND (received_at, id) < (${p(2)}, ${p(3)})` : ''}
          ORDER BY received_at DESC, id DESC LIMIT ${ERASURE_BATCH}`,
        after ? [emailFolded, ...after] : [emailFolded],
      );
      if (rows.length === 0) break;
      const ids = rows.map((row) => row.id);
      leadIds.push(...ids);
      for (const row of rows) if (row.consent_text_sha256 !== null) wordings.add(row.consent_text_sha256);
      const n = ids.length;
      const outbox = await this.outbox.countForLeads(ids);
      const [keys] = await store.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM idempotency_keys WHERE lead_id IN (${store.list(1, n)})`, ids);
      counts.leads += n;
      counts.webhook_messages += outbox.messages;
      counts.webhook_deliveries += outbox.deliveries;
      counts.webhook_attempts += outbox.attempts;
      counts.idempotency_keys += Number(keys.n);
      if (n < ERASURE_BATCH) break;
      const last = rows[n - 1];
      after = [
        this.dataSource.driver.preparePersistentValue(this.dataSource.driver.prepareHydratedValue(last.received_at, this.receivedAt), this.receivedAt),
        last.id,
      ];
      await nextTurn();
    }
    // A wording goes with the last lead that names it: those of the person's leads that no one else's lead names.
    const named = [...wordings].sort();
    for (let start = 0; start < named.length; start += ERASURE_BATCH) {
      const chunk = named.slice(start, start + ERASURE_BATCH);
      const [row] = await store.query<{ n: unknown }>(
        `SELECT COUNT(*) AS n FROM consent_texts c WHERE c.sha256 IN (${store.list(1, chunk.length)})
          AND NOT EXISTS (SELECT 1 FROM leads l WHERE l.consent_text_sha256 = c.sha256 AND l.email_folded <> ${p(chunk.length + 1)})`,
        [...chunk, emailFolded],
      );
      counts.consent_texts += Number(row.n);
    }
    return { leadIds, counts };
  }

  private *batchSteps(
    selection: ErasureSelection,
    cutoff: unknown,
    reason: ErasureReason,
    now: number,
    registrationsOf: string | undefined,
  ): Steps<ErasedBatch & { messageIds: string[] }> {
    const store = this.sql;
    const p = store.p.bind(store);
    const lock = store.postgres ? ('emailFolded' in selection ? ' FOR UPDATE' : ' FOR UPDATE SKIP LOCKED') : '';
    const leads =
      'emailFolded' in selection
        ? // Newest first, as the dry run walks them: the email_folded index's order.
          yield [
            `SELECT id, consent_text_sha256 FROM leads WHERE email_folded = ${p(1)} ORDER BY received_at DESC, id DESC LIMIT ${ERASURE_BATCH}${lock}`,
            [selection.emailFolded],
          ]
        : selection.verdict !== undefined
          ? yield [
              `SELECT id, consent_text_sha256 FROM leads WHERE ${verdictCondition(selection.verdict)} AND received_at < ${p(1)} ORDER BY received_at LIMIT ${ERASURE_BATCH}${lock}`,
              [cutoff],
            ]
          : yield [`SELECT id, consent_text_sha256 FROM leads WHERE received_at < ${p(1)} ORDER BY received_at LIMIT ${ERASURE_BATCH}${lock}`, [cutoff]];
    const counts = { ...NO_ERASURE };
    if (registrationsOf !== undefined) counts.agent_registrations = yield* this.clearRegistrations(registrationsOf);
    const leadIds = leads.map((row) => row.id as string);
    if (leadIds.length === 0) return { leadIds, counts, messageIds: [] };

    const outbox = yield* this.outbox.forgetLeads(leadIds);
    counts.webhook_messages = outbox.messageIds.length;
    counts.webhook_deliveries = outbox.deliveries;
    counts.webhook_attempts = outbox.attempts;
    const list = store.list(1, leadIds.length);
    // A key stays, marked erased, so that a retry gets 410 lead_erased rather than storing the lead again; but its
    // scope (an anonymous caller's address) and the text the client chose are personal: only a hash of both is kept.
    const keys = yield [`SELECT scope, key FROM idempotency_keys WHERE lead_id IN (${list})`, leadIds];
    for (const { scope, key } of keys as { scope: string; key: string }[]) {
      const hashed = erasedKey(this.box, scope, key);
      // An expired mark of the same scope and key, not yet purged, would collide.
      yield [`DELETE FROM idempotency_keys WHERE scope = ${p(1)} AND key = ${p(2)}`, [ERASED_SCOPE, hashed]];
      // Parameters in the order they appear: SQLite's ? placeholders are positional.
      yield [
        `UPDATE idempotency_keys SET scope = ${p(1)}, key = ${p(2)}, erased = true, fingerprint = '', lead_id = ${p(3)}, response_body = NULL, state = 'done'
          WHERE scope = ${p(4)} AND key = ${p(5)}`,
        [ERASED_SCOPE, hashed, NIL_UUID, scope, key],
      ];
    }
    counts.idempotency_keys = keys.length;
    counts.leads = (yield [`DELETE FROM leads WHERE id IN (${list}) RETURNING id`, leadIds]).length;
    // A wording goes with the last lead that names it (sorted, so that two erasures lock shared rows in one order).
    const wordings = [...new Set(leads.map((row) => row.consent_text_sha256 as string | null).filter((sha): sha is string => sha !== null))].sort();
    if (wordings.length) {
      counts.consent_texts = (yield [
        `DELETE FROM consent_texts WHERE sha256 IN (${store.list(1, wordings.length)})
          AND NOT EXISTS (SELECT 1 FROM leads l WHERE l.consent_text_sha256 = consent_texts.sha256) RETURNING sha256`,
        wordings,
      ]).length;
    }
    yield* this.outbox.publish('lead.erased', { lead_ids: leadIds, reason }, now);
    return { leadIds, counts, messageIds: outbox.messageIds };
  }

  /**
   * Removes the address from agent registrations: from `contacts` (entries equal once case-folded), and `email` when it
   * is that address. The registrations that name it are found through the identity module's address index.
   */
  private *clearRegistrations(emailFolded: string): Steps<number> {
    const p = this.sql.p.bind(this.sql);
    const rows = yield* takeRegistrationsNaming(emailFolded, p);
    let changed = 0;
    for (const row of rows) {
      const change = withoutAddress(row, emailFolded);
      if (!change) continue;
      yield [
        // The name the agent gave itself goes too: it may be the person's ("Assistente da Maria").
        `UPDATE agent_registrations SET contacts = ${p(1)}, email = ${p(2)}, verified_email = ${p(3)}, client_name = NULL WHERE id = ${p(4)}`,
        [change.contacts, change.email, change.verifiedEmail, row.id],
      ];
      changed++;
    }
    return changed;
  }
}

/** A registration's contacts (JSON) and email without the address (case-folded), or undefined when it does not name it. */
function withoutAddress(
  row: RegistrationNamingAddress,
  emailFolded: string,
): { contacts: string | null; email: string | null; verifiedEmail: string | null } | undefined {
  const contacts = row.contacts === null ? null : (JSON.parse(row.contacts) as unknown[]);
  const kept = contacts?.filter((contact) => typeof contact !== 'string' || foldEmail(contact.trim()) !== emailFolded) ?? null;
  const matches = (address: string | null) => typeof address === 'string' && foldEmail(address.trim()) === emailFolded;
  if (!matches(row.email) && !matches(row.verified_email) && kept?.length === contacts?.length) return undefined;
  return {
    contacts: kept === null || kept.length === 0 ? null : JSON.stringify(kept),
    email: matches(row.email) ? null : row.email,
    verifiedEmail: matches(row.verified_email) ? null : row.verified_email,
  };
}
