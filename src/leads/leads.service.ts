import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { uuidv7 } from '../database/uuid-v7.js';
import { Caller } from '../auth/caller.decorator.js';
import { IdempotencyService } from './idempotency.service.js';
import { Lead } from './lead.entity.js';
import type { LeadChannel } from './lead-channel.js';
import { foldEmail, LEAD_FIELD_NAMES, NormalisedLead } from './lead-rules.js';
import { LeadValidationService } from './lead-validation.service.js';
import { LeadWriter } from './lead-writer.service.js';

export interface LeadReceipt {
  id: string;
  status: 'received';
  received_at: string;
}

@Injectable()
export class LeadsService {
  constructor(
    @InjectRepository(Lead) private readonly leads: Repository<Lead>,
    private readonly writer: LeadWriter,
    private readonly validation: LeadValidationService,
    private readonly idempotency: IdempotencyService,
  ) {}

  /**
   * Validates, normalises and stores a lead, with the surface it came through; with an Idempotency-Key a retry returns
   * the first receipt instead of a second row.
   */
  async create(body: Record<string, unknown>, caller: Caller, channel: LeadChannel, idempotencyKey?: string): Promise<LeadReceipt> {
    const lead = this.validation.validate(body);
    if (idempotencyKey === undefined) return this.store(uuidv7(), lead, caller, channel);
    return this.idempotency.run(caller.scope, idempotencyKey, leadFingerprint(lead), {
      execute: (id) => this.store(id, lead, caller, channel),
      recover: async (id) => {
        const stored = await this.leads.findOneBy({ id });
        return stored ? receipt(stored.id, stored.receivedAt) : undefined;
      },
    });
  }

  private async store(id: string, lead: NormalisedLead, caller: Caller, channel: LeadChannel): Promise<LeadReceipt> {
    const receivedAt = new Date();
    const row: Lead = {
      id,
      nome: lead.nome,
      email: lead.email,
      emailFolded: foldEmail(lead.email),
      telefone: lead.telefone ?? null,
      telefoneE164: lead.telefone_e164 ?? null,
      empresa: lead.empresa ?? null,
      mensagem: lead.mensagem ?? null,
      origem: lead.origem ?? null,
      registrationId: caller.registrationId,
      clientId: caller.clientId,
      channel,
      receivedAt,
    };
    await this.writer.write(row);
    return receipt(id, receivedAt);
  }
}

function receipt(id: string, receivedAt: Date): LeadReceipt {
  return { id, status: 'received', received_at: receivedAt.toISOString() };
}

/** Same normalised lead → same fingerprint, whatever the JSON formatting or key order of the body. */
export function leadFingerprint(lead: NormalisedLead): string {
  const canonical = JSON.stringify([...LEAD_FIELD_NAMES, 'telefone_e164'].map((field) => lead[field as keyof NormalisedLead] ?? null));
  return createHash('sha256').update(canonical).digest('hex');
}
