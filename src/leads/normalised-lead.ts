import type { LeadContext } from './lead-context.js';
import type { LegalBasisInput } from './legal-bases.js';

/** A lead after validation and normalisation: what is stored and what the sandbox returns. */
export interface NormalisedLead {
  nome: string;
  email: string;
  telefone?: string;
  telefone_e164?: string;
  empresa?: string;
  mensagem?: string;
  origem?: string;
  legal_bases?: LegalBasisInput[];
  consent_text?: string;
  context?: LeadContext;
}
