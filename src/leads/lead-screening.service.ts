import { Injectable } from '@nestjs/common';
import { isCanonicalUuid } from '../database/uuid-v7.js';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request } from 'express';
import { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import { actorOf } from '../auth/actor.js';
import { escapePointer } from '../body/strict-json.js';
import { EntityInsert } from '../database/insert-transaction.js';
import { StepTransactions, Steps } from '../database/step-transaction.js';
import { AppError, validationFailed } from '../problem/app-error.js';
import type { FieldError } from '../problem/error-catalog.js';
import { requestIdOf } from '../request/request-id.js';
import type { ScreeningVerdict } from '../screening/screening.js';
import { auditScreening } from './lead-audit.js';
import { Lead } from './lead.entity.js';
import { LEAD_VIEW_COLUMNS, LeadReader, LeadView, SCREENING_COLUMNS } from './lead-reader.service.js';

/** The verdicts a person gives; `held` is screening's own. */
export const DECISIONS = ['accepted', 'spam'] as const satisfies readonly ScreeningVerdict[];
export type Decision = (typeof DECISIONS)[number];

/**
 * Rows another module writes in the transaction that first accepts a lead (its `lead.received`), from the lead as the read
 * API now shows it. Synchronous, like LeadWriter's parts: on SQLite the transaction has no await inside.
 */
export type ReleasePart<T extends ObjectLiteral> = (lead: LeadView, releasedAt: Date) => readonly Partial<T>[];

const COLUMNS = [...LEAD_VIEW_COLUMNS, ...SCREENING_COLUMNS].join(', ');

/**
 * A person's verdict on a lead (POST /api/v1/leads/{id}/screening, scope leads:screen): the new verdict, who decided and
 * when, in one transaction with what a first acceptance announces. `announced_at` is set by an UPDATE that matches only
 * while it is null, so of any number of releases, concurrent or not, exactly one finds the row and writes the rows of
 * onRelease (the webhooks module's `lead.received`); a lead accepted at intake was announced then.
 */
@Injectable()
export class LeadScreeningService {
  private readonly transactions: StepTransactions;
  private readonly parts: { insert: EntityInsert<ObjectLiteral>; rows: ReleasePart<ObjectLiteral> }[] = [];
  private readonly released: (() => void)[] = [];
  private readonly decidedAt: ReturnType<DataSource['getMetadata']>['columns'][number];

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly reader: LeadReader,
  ) {
    this.transactions = new StepTransactions(dataSource);
    this.decidedAt = dataSource.getMetadata(Lead).findColumnWithPropertyName('screeningDecidedAt')!;
  }

  /** From now on, the first acceptance of a lead also writes the rows `rows` returns for it. */
  onRelease<T extends ObjectLiteral>(entity: EntityTarget<T>, rows: ReleasePart<T>): void {
    this.parts.push({ insert: new EntityInsert(this.dataSource, entity), rows: rows as ReleasePart<ObjectLiteral> });
  }

  /** `listener` runs after a release that announced a lead is committed (the delivery worker wakes up). */
  afterRelease(listener: () => void): void {
    this.released.push(listener);
  }

  /** The decision in `body` applied to the lead `id`, by the operator client or inbox person calling; its view after. */
  async decide(id: string, body: Record<string, unknown>, req: Request): Promise<LeadView> {
    const verdict = decisionOf(body);
    const canonical = id.toLowerCase();
    // The operator client, or `person:<user id>` for a person of the inbox.
    const decidedBy = actorOf(req)!;
    const result = isCanonicalUuid(canonical) ? await this.transactions.run(() => this.steps(canonical, verdict, decidedBy, new Date())) : undefined;
    if (!result) throw new AppError('lead_not_found', 'No stored lead has this id.');
    if (result.announced) for (const listener of this.released) listener();
    auditScreening({
      clientId: decidedBy,
      requestId: requestIdOf(req),
      leadId: canonical,
      from: result.from,
      to: verdict,
      announced: result.announced,
    });
    return result.lead;
  }

  private *steps(
    id: string,
    verdict: Decision,
    decidedBy: string,
    now: Date,
  ): Steps<{ lead: LeadView; from: ScreeningVerdict; announced: boolean } | undefined> {
    const p = (n: number) => this.transactions.p(n);
    // Locks the row on PostgreSQL: a concurrent decision on the same lead waits for this one to commit.
    const [before] = yield [`SELECT screening_verdict FROM leads WHERE id = ${p(1)}${this.transactions.postgres ? ' FOR UPDATE' : ''}`, [id]];
    if (!before) return undefined;
    const decidedAt = this.dataSource.driver.preparePersistentValue(now, this.decidedAt);
    yield [
      `UPDATE leads SET screening_verdict = ${p(1)}, screening_decided_by = ${p(2)}, screening_decided_at = ${p(3)} WHERE id = ${p(4)}`,
      [verdict, decidedBy, decidedAt, id],
    ];
    let announced = false;
    if (verdict === 'accepted') {
      announced = (yield [`UPDATE leads SET announced_at = ${p(1)} WHERE id = ${p(2)} AND announced_at IS NULL RETURNING id`, [decidedAt, id]]).length === 1;
    }
    const [row] = yield [`SELECT ${COLUMNS} FROM leads WHERE id = ${p(1)}`, [id]];
    const lead = this.reader.viewOf(row);
    if (announced) {
      for (const part of this.parts) {
        const rows = part.rows(lead, now);
        if (rows.length) for (const { sql, values } of part.insert.statements(rows)) yield [sql, values];
      }
    }
    return { lead, from: before.screening_verdict as ScreeningVerdict, announced };
  }
}

/** The body's verdict; a 422 validation_failed naming each wrong member otherwise. */
function decisionOf(body: Record<string, unknown>): Decision {
  const errors: FieldError[] = Object.keys(body)
    .filter((key) => key !== 'verdict')
    .map((key) => ({ pointer: `/${escapePointer(key)}`, code: 'unknown_field', detail: `${key} is not a field of a screening decision.` }));
  const verdict = body.verdict;
  if (verdict === undefined) errors.push({ pointer: '/verdict', code: 'required', detail: 'verdict is required: accepted (release the lead) or spam.' });
  else if (typeof verdict !== 'string') errors.push({ pointer: '/verdict', code: 'invalid_type', detail: 'verdict must be a string: accepted or spam.' });
  else if (!(DECISIONS as readonly string[]).includes(verdict))
    errors.push({ pointer: '/verdict', code: 'invalid_value', detail: 'verdict must be accepted (release the lead) or spam.' });
  if (errors.length) throw validationFailed(errors);
  return verdict as Decision;
}
