import { uuidv7 } from '../../src/database/uuid-v7.js';
import { Lead } from '../../src/leads/lead.entity.js';
import { foldEmail } from '../../src/leads/lead-rules.js';

/** Lead number `i` (its e-mail folded as the service folds it) as a row for inserting straight into the table (many leads, chosen timestamps), with `fields` over it. */
export function storedLead(i: number, fields: Partial<Lead> = {}): Lead {
  const email = fields.email ?? `lead${i}@example.com`;
  return {
    id: uuidv7(),
    nome: `Lead ${i}`,
    email,
    emailFolded: foldEmail(email),
    telefone: null,
    telefoneE164: null,
    empresa: null,
    mensagem: null,
    origem: null,
    registrationId: null,
    clientId: null,
    legalBases: null,
    consentTextSha256: null,
    context: null,
    channel: 'api',
    receivedAt: new Date(),
    screeningVerdict: 'accepted',
    screeningReasons: [],
    screeningDecidedBy: 'screening',
    screeningDecidedAt: new Date(),
    announcedAt: new Date(),
    ...fields,
  };
}
