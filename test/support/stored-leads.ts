import { uuidv7 } from '../../src/database/uuid-v7.js';
import { Lead } from '../../src/leads/lead.entity.js';
import { foldEmail } from '../../src/leads/lead-rules.js';
import { searchDocument } from '../../src/leads/lead-search.js';

/** Lead number `i` (its e-mail folded as the service folds it) as a row for inserting straight into the table (many leads, chosen timestamps; search_folded from its nome, e-mail and empresa), with `fields` over it. */
export function storedLead(i: number, fields: Partial<Lead> = {}): Lead {
  const email = fields.email ?? `lead${i}@example.com`;
  const nome = fields.nome ?? `Lead ${i}`;
  return {
    id: uuidv7(),
    nome,
    email,
    emailFolded: foldEmail(email),
    searchFolded: searchDocument(nome, email, fields.empresa ?? null),
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
