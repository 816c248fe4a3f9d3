import { uuidv7 } from '../../src/database/uuid-v7.js';
import { Lead } from '../../src/leads/lead.entity.js';

/** Lead number `i` as a row for inserting straight into the table (many leads, chosen timestamps), with `fields` over it. */
export function storedLead(i: number, fields: Partial<Lead> = {}): Lead {
  return {
    id: uuidv7(),
    nome: `Lead ${i}`,
    email: `lead${i}@example.com`,
    emailFolded: `lead${i}@example.com`,
    telefone: null,
    telefoneE164: null,
    empresa: null,
    mensagem: null,
    origem: null,
    registrationId: null,
    clientId: null,
    channel: 'api',
    receivedAt: new Date(),
    ...fields,
  };
}
