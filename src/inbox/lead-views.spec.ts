import { LEAD_CHANNELS } from '../leads/lead-channel.js';
import { CONTEXT_MEMBERS } from '../leads/lead-context.js';
import { LEGAL_BASIS_CATEGORIES, LEGAL_BASIS_STATUSES, LEGAL_BASIS_TYPES } from '../leads/legal-bases.js';
import { SCREENING_REASONS, SCREENING_VERDICTS } from '../screening/screening.js';
import { translator } from './inbox-messages.js';
import { LeadsFormat } from './lead-views.js';
import { LEADS_MESSAGES } from './messages/leads.js';

const format = (language: 'pt-BR' | 'en', zone = 'America/Sao_Paulo') => new LeadsFormat(translator(language, LEADS_MESSAGES), language, zone);

describe('the lead pages’ words and formats', () => {
  it('names every verdict, reason, channel, attribution member, legal-basis value and delivery state, in both languages', () => {
    const keys = [
      ...SCREENING_VERDICTS.map((v) => `verdict.${v}`),
      ...Object.keys(SCREENING_REASONS).map((r) => `reason.${r}`),
      ...[...LEAD_CHANNELS, 'data_subject_request'].map((c) => `channel.${c}`),
      ...CONTEXT_MEMBERS.map((m) => `context.${m}`),
      ...LEGAL_BASIS_CATEGORIES.map((c) => `category.${c}`),
      ...LEGAL_BASIS_TYPES.map((t) => `type.${t}`),
      ...LEGAL_BASIS_STATUSES.map((s) => `status.${s}`),
      ...['pending', 'delivered', 'failed', 'skipped'].map((s) => `state.${s}`),
      ...['webhook', 'email'].map((c) => `delivery.channel.${c}`),
    ];
    for (const language of ['pt-BR', 'en'] as const) {
      const words: Readonly<Record<string, string>> = LEADS_MESSAGES[language];
      expect(keys.filter((key) => !(key in words))).toEqual([]);
    }
  });

  it('counts with the language’s digit grouping, exact up to 10,000 and "10.000+" beyond', () => {
    const pt = format('pt-BR');
    expect([pt.leads(0), pt.leads(1), pt.leads(1234), pt.leads(10_000), pt.leads(10_001)]).toEqual([
      '0 leads',
      '1 lead',
      '1.234 leads',
      '10.000 leads',
      '10.000+ leads',
    ]);
    const en = format('en');
    expect([en.leads(1), en.leads(9999), en.leads(10_001), en.amount(10_001)]).toEqual(['1 lead', '9,999 leads', '10,000+ leads', '10,000+']);
  });

  it('cuts a long name into pieces of graphemes for <wbr>, never inside one', () => {
    const pt = format('pt-BR');
    expect(pt.pieces('João Silva')).toEqual(['João Silva']);
    expect(pt.pieces('a'.repeat(20) + 'é\u0301', 16)).toEqual(['a'.repeat(16), 'aaaaé\u0301']);
    expect(pt.pieces('👩‍💻'.repeat(3), 2)).toEqual(['👩‍💻👩‍💻', '👩‍💻']);
  });

  it('writes instants on the team’s clock', () => {
    expect(format('pt-BR').at('2026-11-27T15:04:05.000Z')).toBe('27/11/2026, 12:04:05');
    expect(format('en', 'UTC').at(Date.parse('2026-11-27T15:04:05.000Z'))).toBe('27/11/2026, 15:04:05');
  });

  it('keeps filters in links, leaving empty ones out, and names refused parameters in the page’s words', () => {
    const pt = format('pt-BR');
    expect(pt.link('/inbox/leads', { q: 'joão silva', origem: '', since: undefined, channel: 'form' })).toBe('/inbox/leads?q=jo%C3%A3o+silva&channel=form');
    expect(pt.link('/inbox/leads', {})).toBe('/inbox/leads');
    expect(pt.queryError({ parameter: 'until', code: 'out_of_range' })).toBe('Recebidos até: fora do intervalo (a data final não pode vir antes da inicial).');
    expect(pt.queryError({ parameter: 'cursor', code: 'invalid_cursor' })).toBe('Essa página não vale para estes filtros; comece da primeira página.');
    expect(pt.queryError({ parameter: 'q', code: 'repeated_parameter' })).toBe('Busca: valor inválido.');
    expect(format('en').queryError({ parameter: 'since', code: 'invalid_format' })).toBe('Received from: the value is not in a valid form.');
  });
});
