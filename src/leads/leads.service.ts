import { createHash } from 'node:crypto';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { uuidv7 } from '../database/uuid-v7.js';
import { Caller } from '../auth/caller.decorator.js';
import { IdempotencyService } from './idempotency.service.js';
import { ConsentText } from './consent-text.entity.js';
import { Lead } from './lead.entity.js';
import { consentTextSha256, LegalBasisInput, LegalBasisView } from './legal-bases.js';
import { Metrics } from '../telemetry/metrics.js';
import type { LeadChannel } from './lead-channel.js';
import { foldEmail, LEAD_FIELD_NAMES } from './lead-rules.js';
import { searchDocument } from './lead-search.js';
import type { NormalisedLead } from './normalised-lead.js';
import { LeadValidationService } from './lead-validation.service.js';
import { LeadWriter } from './lead-writer.service.js';
import type { LeadEvidence } from '../screening/lead-evidence.js';
import { AUTOMATIC_DECISION } from '../screening/screening.js';
import { ScreeningService } from '../screening/screening.service.js';

export interface LeadReceipt {
  id: string;
  status: 'received';
  received_at: string;
}

@Injectable()
export class LeadsService implements OnModuleInit {
  constructor(
    @InjectRepository(Lead) private readonly leads: Repository<Lead>,
    private readonly writer: LeadWriter,
    private readonly validation: LeadValidationService,
    private readonly idempotency: IdempotencyService,
    private readonly screening: ScreeningService,
    private readonly metrics: Metrics,
  ) {}

  onModuleInit(): void {
    // Each wording once, however many leads bring it: written with the first of them, and kept as it is after that.
    this.writer.alsoWriteShared(
      ConsentText,
      (lead) => (lead.consentText === undefined ? [] : [{ sha256: lead.consentTextSha256!, text: lead.consentText, createdAt: lead.receivedAt.getTime() }]),
      (row) => row.sha256!,
    );
  }

  /**
   * Validates, normalises, screens and stores a lead, with the surface it came through; with an Idempotency-Key a retry
   * returns the first receipt instead of a second row. The receipt is the same whatever the verdict: it tells a bot nothing.
   */
  async create(body: Record<string, unknown>, caller: Caller, channel: LeadChannel, evidence: LeadEvidence, idempotencyKey?: string): Promise<LeadReceipt> {
    const lead = this.validation.validate(body);
    if (idempotencyKey === undefined) return this.store(uuidv7(), lead, caller, channel, evidence);
    const fingerprint = leadFingerprint(lead);
    // A retry after a failed write is judged again, with the same captcha token: the same retry key lets Turnstile give
    // the first answer rather than "already spent".
    const keyed: LeadEvidence = { ...evidence, retryKey: `${caller.scope}\n${idempotencyKey}\n${fingerprint}` };
    return this.idempotency.run(caller.scope, idempotencyKey, fingerprint, {
      // Judged only by the attempt that stores it: a replay neither spends its tokens again nor changes the verdict.
      execute: (id) => this.store(id, lead, caller, channel, keyed),
      recover: async (id) => {
        const stored = await this.leads.findOneBy({ id });
        return stored ? receipt(stored.id, stored.receivedAt) : undefined;
      },
    });
  }

  private async store(id: string, lead: NormalisedLead, caller: Caller, channel: LeadChannel, evidence: LeadEvidence): Promise<LeadReceipt> {
    const judged = this.screening.judge(lead, caller, evidence);
    const { verdict, reasons } = judged instanceof Promise ? await judged : judged;
    const receivedAt = new Date();
    const sha256 = lead.consent_text === undefined ? null : consentTextSha256(lead.consent_text);
    const row: Lead = {
      id,
      nome: lead.nome,
      email: lead.email,
      emailFolded: foldEmail(lead.email),
      searchFolded: searchDocument(lead.nome, lead.email, lead.empresa ?? null),
      telefone: lead.telefone ?? null,
      telefoneE164: lead.telefone_e164 ?? null,
      empresa: lead.empresa ?? null,
      mensagem: lead.mensagem ?? null,
      origem: lead.origem ?? null,
      registrationId: caller.registrationId,
      clientId: caller.clientId,
      channel,
      receivedAt,
      legalBases: lead.legal_bases ? evidenced(lead.legal_bases, receivedAt.toISOString(), channel, sha256) : null,
      consentTextSha256: sha256,
      consentText: lead.consent_text,
      context: lead.context ?? null,
      screeningVerdict: verdict,
      screeningReasons: reasons,
      screeningDecidedBy: AUTOMATIC_DECISION,
      screeningDecidedAt: receivedAt,
      // Its lead.received is written with it (WebhooksService) only when it is accepted.
      announcedAt: verdict === 'accepted' ? receivedAt : null,
    };
    await this.writer.write(row);
    this.metrics.leadsReceived.inc({ lead_channel: channel, verdict });
    return receipt(id, receivedAt);
  }
}

/** The evidence of each basis: when and through which channel it came, and for a consent, which wording was shown. */
function evidenced(bases: LegalBasisInput[], recordedAt: string, channel: LeadChannel, sha256: string | null): LegalBasisView[] {
  return bases.map(({ category, type, status }) => ({
    category,
    type,
    status,
    recorded_at: recordedAt,
    channel,
    consent_text_sha256: type === 'consent' ? sha256 : null,
    revoked_at: null,
  }));
}

function receipt(id: string, receivedAt: Date): LeadReceipt {
  return { id, status: 'received', received_at: receivedAt.toISOString() };
}

/** Same normalised lead → same fingerprint, whatever the JSON formatting or key order of the body. */
export function leadFingerprint(lead: NormalisedLead): string {
  const fields = [...LEAD_FIELD_NAMES, 'telefone_e164'].map((field) => lead[field as keyof NormalisedLead] ?? null);
  // The consent and attribution members only when given, so a lead without them keeps the fingerprint it always had.
  const extras =
    lead.legal_bases || lead.consent_text !== undefined || lead.context ? [lead.legal_bases ?? null, lead.consent_text ?? null, contextEntries(lead)] : [];
  const canonical = JSON.stringify([...fields, ...extras]);
  return createHash('sha256').update(canonical).digest('hex');
}

/** The context members in one order, whatever order the body gave them in. */
function contextEntries(lead: NormalisedLead): [string, string][] | null {
  return lead.context ? Object.entries(lead.context).sort(([a], [b]) => (a < b ? -1 : 1)) : null;
}
