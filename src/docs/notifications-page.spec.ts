import { EtaMailTemplates } from '../mail/eta-mail-templates.js';
import type { MailLanguage } from '../mail/mail-templates.js';
import type { LeadView } from '../leads/lead-reader.service.js';
import { DOC_PAGES } from './docs.pages.js';

/** /docs/notifications shows each e-mail's subject in both languages: they must be what the templates render. */
describe('the notifications page', () => {
  const page = DOC_PAGES.find((doc) => doc.slug === 'notifications')!.markdown;
  const templates = new EtaMailTemplates('America/Sao_Paulo');
  const lead = {
    id: '019ab600-0000-7000-8000-000000000000',
    received_at: '2026-11-26T13:00:00.000Z',
    nome: 'Beatriz Lima',
    email: 'beatriz@example.com',
    telefone: null,
    telefone_e164: null,
    empresa: null,
    mensagem: null,
    origem: 'site',
    channel: 'form',
    context: {},
    legal_bases: [],
  } as unknown as LeadView;
  const unsubscribeUrl = 'https://leads.example.com/notifications/unsubscribe?token=t';
  /** The table's row of one e-mail: its two subjects, as the page writes them. */
  const row = (mail: string) => {
    const line = page.split('\n').find((text) => text.startsWith(`| ${mail} |`));
    return line
      ?.split(' | ')
      .slice(1, 3)
      .map((cell) => cell.replace(/^`|`$/g, ''));
  };
  const both = (render: (language: MailLanguage) => string) => (['pt-BR', 'en'] as const).map(render);

  it.each([
    [
      'confirmation',
      (language: MailLanguage) => templates.confirmation(language, { confirmUrl: 'https://leads.example.com/c', expiresAt: new Date() }).subject,
    ],
    [
      'new lead',
      (language: MailLanguage) => templates.leadNotification(language, { lead, leadUrl: 'https://x', includePersonalData: true, unsubscribeUrl }).subject,
    ],
    [
      'daily digest',
      (language: MailLanguage) =>
        templates.digest(language, {
          day: '2026-11-26',
          total: 12,
          leads: [lead],
          exportUrl: 'https://x',
          awaitingReview: 3,
          includePersonalData: true,
          unsubscribeUrl,
        }).subject,
    ],
    ['test', (language: MailLanguage) => templates.test(language, { unsubscribeUrl }).subject],
  ])('%s: the subjects shown are the rendered ones', (mail, render) => {
    expect(row(mail)).toEqual(both(render));
  });
});
