import { createHash } from 'node:crypto';

/**
 * Legal bases in RD Station's vocabulary (conversions API `legal_bases`), so operators forward them without mapping.
 * `consent_text`, the wording the person saw, applies to the entries of type `consent`; the service stores each distinct
 * wording once (consent_texts) and records on every entry when and through which channel it was given.
 */
export const LEGAL_BASIS_CATEGORIES = ['communications', 'data_processing'] as const;
export const LEGAL_BASIS_TYPES = ['consent', 'legitimate_interest', 'pre_existent_contract', 'judicial_process', 'vital_interest', 'public_interest'] as const;
export const LEGAL_BASIS_STATUSES = ['granted', 'declined'] as const;
export const LEGAL_BASIS_MEMBERS = ['category', 'type', 'status'] as const;
export const MAX_LEGAL_BASES = 4;
export const CONSENT_TEXT_MAX = 2000;

export type LegalBasisCategory = (typeof LEGAL_BASIS_CATEGORIES)[number];

export interface LegalBasisInput {
  category: LegalBasisCategory;
  type: (typeof LEGAL_BASIS_TYPES)[number];
  status: (typeof LEGAL_BASIS_STATUSES)[number];
}

/** Where an entry was recorded: a lead's channel, or a data-subject request (a revocation with nothing to revoke). */
export type EvidenceChannel = 'api' | 'form' | 'mcp' | 'cli' | 'data_subject_request';

/** A stored entry with its evidence, as every read surface shows it (and as the `legal_bases` column holds it, JSON). */
export interface LegalBasisView extends LegalBasisInput {
  /** When it was given (the lead's received_at), ISO 8601 in UTC. */
  recorded_at: string;
  channel: EvidenceChannel;
  /** SHA-256 (hex) of the wording shown, for entries of type consent sent with a consent_text; else null. */
  consent_text_sha256: string | null;
  /** When a consent-revocation request declined it; null otherwise. */
  revoked_at: string | null;
}

/** Wordings hashed lately: a form sends the same one with every lead. */
const recent = new Map<string, string>();
const RECENT_WORDINGS = 64;

/** The wording's fingerprint: SHA-256 of its UTF-8 bytes (after trimming and NFC), in hex. */
export function consentTextSha256(text: string): string {
  let sha = recent.get(text);
  if (sha === undefined) {
    sha = createHash('sha256').update(text).digest('hex');
    if (recent.size >= RECENT_WORDINGS) recent.delete(recent.keys().next().value!);
    recent.set(text, sha);
  }
  return sha;
}
