import { CONTEXT_MEMBERS } from './lead-context.js';

/**
 * The pt-BR export profile's header row (`delimiter=;`): each CSV column's name as the marketing team reads it in a
 * spreadsheet. `leads import` (which bundles this file) reads these headers back to the same members.
 */
export const PT_BR_HEADERS: Readonly<Record<string, string>> = {
  id: 'ID',
  received_at: 'Recebido em',
  nome: 'Nome',
  email: 'E-mail',
  telefone: 'Telefone',
  telefone_e164: 'Telefone (E.164)',
  empresa: 'Empresa',
  mensagem: 'Mensagem',
  origem: 'Origem',
  channel: 'Canal',
  registration_id: 'Registro do agente',
  client_id: 'Cliente operador',
  page_url: 'URL da página',
  page_title: 'Título da página',
  referrer: 'Página de origem',
  ...Object.fromEntries(CONTEXT_MEMBERS.filter((member) => /^(utm_|gclid|fbclid)/.test(member)).map((member) => [member, member])),
  communications_type: 'Comunicações: base legal',
  communications_status: 'Comunicações: situação',
  communications_recorded_at: 'Comunicações: registrado em',
  communications_revoked_at: 'Comunicações: revogado em',
  data_processing_type: 'Tratamento de dados: base legal',
  data_processing_status: 'Tratamento de dados: situação',
  data_processing_recorded_at: 'Tratamento de dados: registrado em',
  data_processing_revoked_at: 'Tratamento de dados: revogado em',
  consent_text_sha256: 'SHA-256 do texto de consentimento',
  screening_verdict: 'Triagem: veredito',
  screening_reasons: 'Triagem: motivos',
  screening_decided_by: 'Triagem: decidido por',
  screening_decided_at: 'Triagem: decidido em',
};

/** The pt-BR profile's columns when the request names none. */
export const PT_BR_DEFAULT_COLUMNS = ['received_at', 'nome', 'email', 'telefone', 'empresa', 'mensagem', 'origem'] as const;
