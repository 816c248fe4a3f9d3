import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { LeadChannel } from './lead-channel.js';
import type { LeadContext } from './lead-context.js';
import type { LegalBasisView } from './legal-bases.js';
import type { ScreeningReason, ScreeningVerdict } from '../screening/screening.js';

/** A stored lead; the row holds the normalised fields exactly as the sandbox would return them. */
@Entity('leads')
export class Lead {
  @PrimaryColumn({ type: 'varchar' })
  id: string;

  @Column({ type: 'varchar' })
  nome: string;

  @Column({ type: 'varchar' })
  email: string;

  /** foldEmail(email) (lead-rules.ts): what the read API's `email` filter matches, through an index. */
  @Column({ type: 'varchar', name: 'email_folded' })
  emailFolded: string;

  /** searchDocument(nome, email, empresa) (lead-search.ts): what `q` searches, through leads_search (SQLite) or a GIN index. */
  @Column({ type: 'text', name: 'search_folded' })
  searchFolded: string;

  @Column({ type: 'varchar', nullable: true })
  telefone: string | null;

  @Column({ type: 'varchar', name: 'telefone_e164', nullable: true })
  telefoneE164: string | null;

  @Column({ type: 'varchar', nullable: true })
  empresa: string | null;

  @Column({ type: 'text', nullable: true })
  mensagem: string | null;

  @Column({ type: 'varchar', nullable: true })
  origem: string | null;

  /** The agent registration that sent the lead with a bearer token; null for anonymous callers. */
  @Column({ type: 'varchar', name: 'registration_id', nullable: true })
  registrationId: string | null;

  /** The operator client that sent the lead with its token (scope leads:write); null otherwise. */
  @Column({ type: 'varchar', name: 'client_id', nullable: true })
  clientId: string | null;

  /** The surface it came through (lead-channel.ts). */
  @Column({ type: 'varchar' })
  channel: LeadChannel;

  /** The legal bases with their evidence, as the read API shows them (JSON); null when none were sent. */
  @Column({ type: 'simple-json', name: 'legal_bases', nullable: true })
  legalBases: LegalBasisView[] | null;

  /** The wording of its consent entries (consent_texts.sha256), indexed: erasure finds whether a wording is still used. */
  @Column({ type: 'varchar', name: 'consent_text_sha256', nullable: true })
  consentTextSha256: string | null;

  /** Not a column: the wording itself, for the consent_texts row written with the lead (LeadsService). */
  consentText?: string;

  /** Attribution (JSON): page, referrer, UTM and click ids; null when none was sent. */
  @Column({ type: 'simple-json', nullable: true })
  context: LeadContext | null;

  // The column type is left to each driver (datetime / timestamp); the migration creates timestamptz on PostgreSQL.
  @Column({ name: 'received_at' })
  receivedAt: Date;

  /** The screening verdict (src/screening/screening.ts): only accepted leads reach lists, webhooks and people by default. */
  @Column({ type: 'varchar', name: 'screening_verdict' })
  screeningVerdict: ScreeningVerdict;

  /** Its reason codes (JSON array), empty for a lead nothing held. */
  @Column({ type: 'simple-json', name: 'screening_reasons' })
  screeningReasons: ScreeningReason[];

  /** `screening` (AUTOMATIC_DECISION), or the operator client that decided. */
  @Column({ type: 'varchar', name: 'screening_decided_by' })
  screeningDecidedBy: string;

  @Column({ name: 'screening_decided_at' })
  screeningDecidedAt: Date;

  /** When its `lead.received` was written to the outbox; null while it never was (held or spam, not released). */
  @Column({ name: 'announced_at', nullable: true, type: Date })
  announcedAt: Date | null;
}
