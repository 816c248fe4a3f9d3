import { readdirSync } from 'node:fs';
import type { LeadView } from '../leads/lead-reader.service.js';
import { DIGEST_TABLE_MAX, EtaMailTemplates, MAIL_LANGUAGES, MAIL_NAMES, templateSections } from './eta-mail-templates.js';
import type { MailLanguage, RenderedMail } from './mail-templates.js';
import { TEMPLATE_FILES, TEMPLATES_FOLDER } from './template-files.js';

const templates = new EtaMailTemplates('America/Sao_Paulo');
const UNSUBSCRIBE = 'https://leads.empresa.example/notifications/unsubscribe/tok-1';
const LEAD_URL = 'https://leads.empresa.example/api/v1/leads/0b6f2a4e-1c9d-4d7e-8f00-1234567890ab';

function lead(overrides: Partial<LeadView> = {}): LeadView {
  return {
    id: '0b6f2a4e-1c9d-4d7e-8f00-1234567890ab',
    received_at: '2026-11-26T15:04:05.000Z',
    nome: 'Beatriz Lima',
    email: 'beatriz@cliente.example',
    telefone: '(11) 98765-4321',
    telefone_e164: '+5511987654321',
    empresa: 'Padaria Lima',
    mensagem: 'Quero um orçamento\npara 30 pessoas.',
    origem: 'site',
    channel: 'form',
    registration_id: null,
    client_id: null,
    legal_bases: [
      {
        category: 'communications',
        type: 'consent',
        status: 'granted',
        recorded_at: '2026-11-26T15:04:05.000Z',
        channel: 'form',
        consent_text_sha256: null,
        revoked_at: null,
      },
      {
        category: 'data_processing',
        type: 'legitimate_interest',
        status: 'granted',
        recorded_at: '2026-11-26T15:04:05.000Z',
        channel: 'form',
        consent_text_sha256: null,
        revoked_at: null,
      },
    ],
    context: { page_url: 'https://empresa.example/contato', utm_source: 'newsletter', utm_medium: 'email', utm_campaign: 'black-friday' },
    screening: { verdict: 'accepted', reasons: [], decided_by: 'screening', decided_at: '2026-11-26T15:04:05.000Z' },
    ...overrides,
  };
}

/** What a lead carries that a person could be known by, or that tells what they wrote and where they came from. */
const PERSONAL = [
  'Beatriz',
  'Lima',
  'beatriz@cliente.example',
  '98765',
  '+5511987654321',
  'Padaria',
  'orçamento',
  'newsletter',
  'black-friday',
  'empresa.example/contato',
];
const HOSTILE = lead({
  nome: '<img src=x onerror=alert(1)>Bia\r\nBcc: victim@else.example',
  empresa: '"><script>alert(2)</script>',
  mensagem: '<a href="https://phish.example">clique</a> & </td></tr></table>',
  origem: "x' onmouseover='alert(3)",
  context: { utm_source: '<b>bold</b>' },
});
const SCRIPTS = /<script|<img|<a href="https:\/\/phish|<b>|' onmouseover/;
const all = (mail: RenderedMail) => `${mail.subject}\n${mail.text}\n${mail.html}`;

const digestOf = (leads: LeadView[], includePersonalData: boolean, total = leads.length) => ({
  day: '2026-11-26',
  total,
  leads,
  exportUrl: 'https://leads.empresa.example/api/v1/leads/export?since=2026-11-26',
  awaitingReview: 3,
  includePersonalData,
  unsubscribeUrl: UNSUBSCRIBE,
});

describe('the template files (src/mail/templates/)', () => {
  it('are every .eta file of the folder, and each mail has its subject, text and HTML in pt-BR and English', () => {
    expect(Object.keys(TEMPLATE_FILES)).toEqual(
      readdirSync(TEMPLATES_FOLDER)
        .filter((name) => name.endsWith('.eta'))
        .sort(),
    );
    for (const mail of MAIL_NAMES) {
      for (const language of MAIL_LANGUAGES) {
        expect([`${mail}.${language}`, Object.keys(templateSections(mail, TEMPLATE_FILES[`${mail}.${language}.eta`])).sort()]).toEqual([
          `${mail}.${language}`,
          ['html', 'subject', 'text'],
        ]);
      }
    }
  });

  it('write unescaped output (<%~) only for included parts and the layout body, never for data', () => {
    for (const [file, source] of Object.entries(TEMPLATE_FILES)) {
      const html = templateSections(file, source).html ?? '';
      for (const [raw] of html.matchAll(/<%~[^%]*%>/g))
        expect([file, raw]).toEqual([file, expect.stringMatching(/^<%~ (include\('@[\w.-]+', it\.lead\)|it\.body) -?%>$/)]);
    }
  });

  it('a template file must open with a section line, and a mail missing a part stops the start', () => {
    expect(() => templateSections('x.eta', 'Hello\n=== html ===\n<p>')).toThrow('must open with a line such as === html ===');
    const { 'test.en.eta': _dropped, ...rest } = TEMPLATE_FILES;
    expect(() => new EtaMailTemplates('UTC', { ...rest, 'test.en.eta': '=== subject ===\nTest\n=== text ===\nTest\n' })).toThrow(
      'test.en.eta: no html section',
    );
  });
});

describe('the lead notification', () => {
  it.each([
    ['pt-BR', 'Novo lead: Beatriz Lima (site)'],
    ['en', 'New lead: Beatriz Lima (site)'],
  ] as const)('in %s: subject with name and origem; text and HTML with every field, the link and the way out', (language, subject) => {
    const mail = templates.leadNotification(language, { lead: lead(), leadUrl: LEAD_URL, unsubscribeUrl: UNSUBSCRIBE, includePersonalData: true });
    expect(mail.subject).toBe(subject);
    const shown = [
      'Beatriz Lima',
      'beatriz@cliente.example',
      '+5511987654321',
      'Padaria Lima',
      'site',
      'form',
      '0b6f2a4e-1c9d-4d7e-8f00-1234567890ab',
      'https://empresa.example/contato',
      'utm_source',
      'newsletter',
      'utm_medium',
      'black-friday',
      'communications: consent, granted',
      'data_processing: legitimate_interest, granted',
      // 15:04 UTC on the team's clock
      '12:04',
      LEAD_URL,
    ];
    for (const part of [mail.text, mail.html]) {
      for (const value of shown) expect([language, value, part.includes(value)]).toEqual([language, value, true]);
    }
    expect(mail.text).toContain('Quero um orçamento\npara 30 pessoas.');
    expect(mail.html).toContain(`<html lang="${language}">`);
  });

  it.each([
    ['pt-BR', 'Cancelar inscrição'],
    ['en', 'Unsubscribe'],
  ] as const)('in %s, with the lead as Reply-To, names the way out without its link: a reply would quote the link to the lead', (language, button) => {
    const mail = templates.leadNotification(language, { lead: lead(), leadUrl: LEAD_URL, unsubscribeUrl: UNSUBSCRIBE, includePersonalData: true });
    for (const part of [mail.text, mail.html]) expect([part.includes(UNSUBSCRIBE), part.includes(button)]).toEqual([false, true]);
  });

  it('without origem the subject is the name alone', () => {
    expect(
      templates.leadNotification('pt-BR', { lead: lead({ origem: null }), leadUrl: LEAD_URL, unsubscribeUrl: UNSUBSCRIBE, includePersonalData: true }).subject,
    ).toBe('Novo lead: Beatriz Lima');
  });

  it.each(MAIL_LANGUAGES.map((language) => [language]))(
    'in %s, with include_personal_data false, shows the id and the link and nothing else of the lead',
    (language) => {
      const mail = templates.leadNotification(language, { lead: lead(), leadUrl: LEAD_URL, unsubscribeUrl: UNSUBSCRIBE, includePersonalData: false });
      for (const value of PERSONAL) expect([value, all(mail).includes(value)]).toEqual([value, false]);
      expect([
        mail.text.includes(LEAD_URL),
        mail.html.includes(LEAD_URL),
        mail.subject.includes('0b6f2a4e-1c9d-4d7e-8f00-1234567890ab'),
        mail.text.includes(UNSUBSCRIBE),
      ]).toEqual([true, true, true, true]);
    },
  );

  it.each(MAIL_LANGUAGES.map((language) => [language]))('in %s, escapes what the lead wrote in the HTML, and keeps the subject one line', (language) => {
    const mail = templates.leadNotification(language, { lead: HOSTILE, leadUrl: LEAD_URL, unsubscribeUrl: UNSUBSCRIBE, includePersonalData: true });
    expect(mail.html).not.toMatch(SCRIPTS);
    expect(mail.html).toContain('&lt;img src=x onerror=alert(1)&gt;Bia');
    expect(mail.html).toContain('&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;');
    expect(mail.html).toContain('&amp; &lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;');
    expect(mail.subject).not.toMatch(/[\r\n]/);
    expect(mail.subject).toMatch(/^(Novo lead|New lead): <img src=x onerror=alert\(1\)>Bia Bcc: victim@else\.example \(x' onmouseover='alert\(3\)\)$/);
    // The text part is text: shown as written.
    expect(mail.text).toContain('<a href="https://phish.example">clique</a>');
  });

  it('bounds a subject made long by the name', () => {
    const mail = templates.leadNotification('en', {
      lead: lead({ nome: 'N'.repeat(500) }),
      leadUrl: LEAD_URL,
      unsubscribeUrl: UNSUBSCRIBE,
      includePersonalData: true,
    });
    expect(mail.subject.length).toBe(200);
  });
});

describe('the digest', () => {
  it.each([
    ['pt-BR', '2 novos leads em 26 de novembro de 2026', '3 leads aguardando revisão'],
    ['en', '2 new leads on 26 November 2026', '3 leads awaiting review'],
  ] as const)('in %s: the count, a table of the leads, what awaits review, the export and the way out', (language, subject, awaiting) => {
    const mail = templates.digest(language, digestOf([lead(), lead({ id: 'second-lead', nome: 'Carlos Souza', email: 'carlos@cliente.example' })], true));
    expect(mail.subject).toBe(subject);
    for (const part of [mail.text, mail.html]) {
      for (const value of [
        'Beatriz Lima',
        'beatriz@cliente.example',
        'Carlos Souza',
        'Padaria Lima',
        awaiting,
        'https://leads.empresa.example/api/v1/leads/export',
        UNSUBSCRIBE,
      ]) {
        expect([value, part.includes(value)]).toEqual([value, true]);
      }
    }
    expect(mail.html.match(/<tr>/g)).toHaveLength(3);
  });

  it('says "1 lead" for one', () => {
    const mail = templates.digest('pt-BR', { ...digestOf([lead()], true), awaitingReview: 1 });
    expect([mail.subject, mail.text.includes('1 lead aguardando revisão.')]).toEqual(['1 novo lead em 26 de novembro de 2026', true]);
  });

  it.each(MAIL_LANGUAGES.map((language) => [language]))('in %s, past 200 leads gives the count and the export, no table', (language) => {
    const mail = templates.digest(
      language,
      digestOf(
        Array.from({ length: DIGEST_TABLE_MAX }, () => lead()),
        true,
        DIGEST_TABLE_MAX + 1,
      ),
    );
    expect(mail.subject).toContain(String(DIGEST_TABLE_MAX + 1));
    expect(all(mail)).not.toContain('Beatriz');
    expect(mail.html).not.toContain('<table');
    expect(mail.text).toContain('https://leads.empresa.example/api/v1/leads/export');
  });

  it.each(MAIL_LANGUAGES.map((language) => [language]))('in %s, with include_personal_data false, lists ids and times only', (language) => {
    const mail = templates.digest(language, digestOf([lead()], false));
    for (const value of PERSONAL) expect([value, all(mail).includes(value)]).toEqual([value, false]);
    expect(mail.html).toContain('0b6f2a4e-1c9d-4d7e-8f00-1234567890ab');
  });

  it.each(MAIL_LANGUAGES.map((language) => [language]))('in %s, escapes the leads in its table', (language) => {
    const mail = templates.digest(language, digestOf([HOSTILE], true));
    expect(mail.html).not.toMatch(SCRIPTS);
    expect(mail.subject).not.toMatch(/[\r\n]/);
  });
});

describe('the confirmation and the test', () => {
  const expiresAt = new Date('2026-12-04T15:00:00.000Z');

  it.each([
    ['pt-BR', 'Confirme', '04/12/2026', 'só o botão da página'],
    ['en', 'Confirm', '04 Dec 2026', "only the page's button"],
  ] as const)('in %s the confirmation explains, links and says until when (on the team’s clock)', (language, subject, day, button) => {
    const mail = templates.confirmation(language, { confirmUrl: 'https://leads.empresa.example/notifications/confirm?token=t1', expiresAt });
    expect(mail.subject.startsWith(subject)).toBe(true);
    for (const part of [mail.text, mail.html]) {
      expect([part.includes('https://leads.empresa.example/notifications/confirm?token=t1'), part.includes(day), part.includes('12:00')]).toEqual([
        true,
        true,
        true,
      ]);
    }
    expect(mail.text).toContain(button);
  });

  it.each(MAIL_LANGUAGES.map((language) => [language]))('in %s the test mail shows the way out', (language: MailLanguage) => {
    const mail = templates.test(language, { unsubscribeUrl: UNSUBSCRIBE });
    expect([mail.subject.length > 0, mail.text.includes(UNSUBSCRIBE), mail.html.includes(`href="${UNSUBSCRIBE}"`)]).toEqual([true, true, true]);
  });

  it('escapes a link in an attribute', () => {
    const mail = templates.test('en', { unsubscribeUrl: 'https://x.example/u?a=1&b="><script>' });
    expect(mail.html).toContain('href="https://x.example/u?a=1&amp;b=&quot;&gt;&lt;script&gt;"');
  });
});

describe('the privacy request code', () => {
  it.each([
    ['pt-BR', 'access', 'Seu código para confirmar o pedido de privacidade: 042917', 'uma cópia dos dados'],
    ['pt-BR', 'erasure', 'Seu código para confirmar o pedido de privacidade: 042917', 'não há como desfazer'],
    ['en', 'consent_revocation', 'Your code to confirm your privacy request: 042917', 'stop sending communications'],
    ['en', 'erasure', 'Your code to confirm your privacy request: 042917', 'cannot be undone'],
  ] as const)('in %s for %s: the code in the subject and first in the text, and what confirming does', (language, request, subject, says) => {
    const mail = templates.privacyCode(language, { code: '042917', minutes: 10, request });
    expect(mail.subject).toBe(subject);
    expect(/\d{6}/.exec(mail.text)?.[0]).toBe('042917');
    for (const part of [mail.text, mail.html]) {
      expect(part).toContain(says);
      expect(part).toContain('10');
    }
  });
});

describe('the claim code', () => {
  it.each([
    ['pt-BR', 'Seu código para confirmar um agente: 042917', 'em seu nome'],
    ['en', 'Your code to confirm an agent: 042917', 'act for you'],
  ] as const)('in %s: its own code only, what confirming does, and not to go on if you did not start it', (language, subject, says) => {
    const mail = templates.claimCode(language, { code: '042917', minutes: 10 });
    expect(mail.subject).toBe(subject);
    expect(/\d{6}/.exec(mail.text)?.[0]).toBe('042917');
    for (const part of [mail.text, mail.html]) expect(part).toContain(says);
  });
});
