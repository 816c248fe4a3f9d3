import { Eta } from 'eta';
import type { LeadView } from '../leads/lead-reader.service.js';
import { CONTEXT_MEMBERS } from '../leads/lead-context.js';
import { oneLine } from './mail-message.js';
import type {
  ConfirmationMail,
  DigestMail,
  LeadNotificationMail,
  MailLanguage,
  MailTemplates,
  PrivacyCodeMail,
  RenderedMail,
  TestMail,
  VerificationMail,
} from './mail-templates.js';
import { TEMPLATE_FILES } from './template-files.js';

export const MAIL_LANGUAGES: readonly MailLanguage[] = ['pt-BR', 'en'];
/** The e-mails, each a file per language: `<mail>.<language>.eta`. */
export const MAIL_NAMES = ['confirmation', 'lead-notification', 'digest', 'test', 'verification', 'privacy-code', 'claim-code'] as const;
export type MailName = (typeof MAIL_NAMES)[number];
/** The most leads a digest lists; past it, the count and the export link. */
export const DIGEST_TABLE_MAX = 200;
const SUBJECT_MAX = 200;
/** 27/11/2026 12:04 BRT; 27 Nov 2026, 12:04 BRT: the zone named, since a recipient may read it elsewhere. */
const DATE_TIME: Intl.DateTimeFormatOptions = { day: '2-digit', month: '2-digit', year: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' };

type Part = 'subject' | 'text' | 'html';
const PARTS: readonly Part[] = ['subject', 'text', 'html'];
/** A template file is sections, each opened by a line `=== subject ===`, `=== text ===` or `=== html ===`. */
const SECTION = /^=== (subject|text|html) ===$/gm;

/** A lead's fields as the templates show them: text, dates on the team's clock, no absent field. */
export interface LeadFields {
  id: string;
  receivedAt: string;
  nome: string;
  email: string;
  telefone: string | null;
  empresa: string | null;
  mensagem: string | null;
  origem: string | null;
  channel: string;
  /** Attribution members that were sent (UTM, page, referrer, click ids), by their API names. */
  context: { name: string; value: string }[];
  legalBases: { category: string; type: string; status: string; revoked: boolean }[];
}

/** Splits a template file into its parts. */
export function templateSections(file: string, source: string): Partial<Record<Part, string>> {
  const marks = [...source.matchAll(SECTION)];
  if (marks.length === 0 || source.slice(0, marks[0].index).trim() !== '') throw new Error(`mail template ${file}: must open with a line such as === html ===`);
  const sections: Partial<Record<Part, string>> = {};
  marks.forEach((mark, i) => {
    const part = mark[1] as Part;
    if (sections[part] !== undefined) throw new Error(`mail template ${file}: two ${part} sections`);
    // The text between this marker's line and the next marker (its last line break is the file's, not the mail's).
    sections[part] = source.slice(mark.index + mark[0].length + 1, marks[i + 1]?.index ?? source.length).replace(/\n$/, '');
  });
  return sections;
}

/** What a privacy code confirms (`asked`: after "you asked for"), and what entering it does, by request type. */
const PRIVACY_WORDS: Record<MailLanguage, Record<PrivacyCodeMail['request'], { asked: string; done: string }>> = {
  'pt-BR': {
    access: { asked: 'uma cópia dos dados que temos sobre este endereço', done: 'Ao digitá-lo, você vê esses dados na hora.' },
    erasure: { asked: 'a eliminação dos dados que temos sobre este endereço', done: 'Ao digitá-lo, esses dados são eliminados: não há como desfazer.' },
    consent_revocation: {
      asked: 'que deixemos de enviar comunicações a este endereço',
      done: 'Ao digitá-lo, registramos que você revoga o consentimento para comunicações.',
    },
  },
  en: {
    access: { asked: 'a copy of the data we hold on this address', done: 'Entering it shows you that data at once.' },
    erasure: { asked: 'the erasure of the data we hold on this address', done: 'Entering it erases that data: this cannot be undone.' },
    consent_revocation: {
      asked: 'that we stop sending communications to this address',
      done: 'Entering it records that you withdraw your consent to communications.',
    },
  },
};

/**
 * The e-mails in pt-BR and English, from the eta templates of src/mail/templates/ (embedded by the release build).
 * Lead data is the attacker's: the HTML part escapes every interpolation (`<%= %>`), subjects are one line, and a lead
 * whose recipient takes no personal data reaches the templates as its id alone, so no template can show more.
 */
export class EtaMailTemplates implements MailTemplates {
  private readonly text = new Eta({ autoEscape: false, autoTrim: false, cache: true, useWith: false });
  private readonly html = new Eta({ autoEscape: true, autoTrim: false, cache: true, useWith: false });
  private readonly dateTime: Record<MailLanguage, Intl.DateTimeFormat>;
  private readonly date: Record<MailLanguage, Intl.DateTimeFormat>;

  constructor(
    private readonly timeZone: string,
    files: Readonly<Record<string, string>> = TEMPLATE_FILES,
  ) {
    this.dateTime = {
      'pt-BR': new Intl.DateTimeFormat('pt-BR', { timeZone, ...DATE_TIME }),
      en: new Intl.DateTimeFormat('en-GB', { timeZone, ...DATE_TIME, month: 'short' }),
    };
    this.date = {
      'pt-BR': new Intl.DateTimeFormat('pt-BR', { timeZone: 'UTC', dateStyle: 'long' }),
      en: new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', dateStyle: 'long' }),
    };
    for (const [file, source] of Object.entries(files)) {
      const name = file.replace(/\.eta$/, '');
      for (const [part, body] of Object.entries(templateSections(file, source))) {
        // Subjects are text: escaped only where they become HTML.
        (part === 'html' ? this.html : this.text).loadTemplate(`@${name}.${part}`, body);
      }
    }
    // Every mail in every language, each part, compiles now: a missing or broken template stops the start, not a send.
    for (const mail of MAIL_NAMES) {
      for (const language of MAIL_LANGUAGES) {
        for (const part of PARTS) {
          const name = `@${mail}.${language}.${part}`;
          const engine = part === 'html' ? this.html : this.text;
          if (!engine.templatesSync.get(name)) throw new Error(`mail template ${mail}.${language}.eta: no ${part} section`);
        }
      }
    }
  }

  confirmation(language: MailLanguage, mail: ConfirmationMail): RenderedMail {
    return this.render('confirmation', language, { confirmUrl: mail.confirmUrl, expiresAt: this.dateTime[language].format(mail.expiresAt) });
  }

  leadNotification(language: MailLanguage, mail: LeadNotificationMail): RenderedMail {
    return this.render('lead-notification', language, {
      leadId: mail.lead.id,
      leadUrl: mail.leadUrl,
      unsubscribeUrl: mail.unsubscribeUrl,
      lead: mail.includePersonalData ? this.fields(language, mail.lead) : null,
    });
  }

  digest(language: MailLanguage, mail: DigestMail): RenderedMail {
    const listed = mail.total <= DIGEST_TABLE_MAX && mail.leads.length > 0;
    return this.render('digest', language, {
      day: this.date[language].format(new Date(`${mail.day}T00:00:00Z`)),
      total: mail.total,
      awaitingReview: mail.awaitingReview,
      exportUrl: mail.exportUrl,
      unsubscribeUrl: mail.unsubscribeUrl,
      tableMax: DIGEST_TABLE_MAX,
      // Without personal data a row is the lead's id and when it came.
      leads: listed
        ? mail.leads
            .slice(0, DIGEST_TABLE_MAX)
            .map((lead) =>
              mail.includePersonalData ? this.fields(language, lead) : { id: lead.id, receivedAt: this.dateTime[language].format(new Date(lead.received_at)) },
            )
        : null,
      includePersonalData: mail.includePersonalData,
    });
  }

  test(language: MailLanguage, mail: TestMail): RenderedMail {
    return this.render('test', language, { unsubscribeUrl: mail.unsubscribeUrl });
  }

  verification(language: MailLanguage, mail: VerificationMail): RenderedMail {
    return this.render('verification', language, { code: mail.code, minutes: mail.minutes });
  }

  privacyCode(language: MailLanguage, mail: PrivacyCodeMail): RenderedMail {
    return this.render('privacy-code', language, { code: mail.code, minutes: mail.minutes, ...PRIVACY_WORDS[language][mail.request] });
  }

  claimCode(language: MailLanguage, mail: VerificationMail): RenderedMail {
    return this.render('claim-code', language, { code: mail.code, minutes: mail.minutes });
  }

  private render(mail: MailName, language: MailLanguage, data: object): RenderedMail {
    const name = `@${mail}.${language}`;
    const subject = oneLine(this.text.render(`${name}.subject`, data))
      .replace(/\s+/g, ' ')
      .trim();
    return {
      subject: subject.length > SUBJECT_MAX ? `${subject.slice(0, SUBJECT_MAX - 1)}…` : subject,
      text: this.text.render(`${name}.text`, data),
      html: this.html.render(`${name}.html`, data),
    };
  }

  private fields(language: MailLanguage, lead: LeadView): LeadFields {
    return {
      id: lead.id,
      receivedAt: this.dateTime[language].format(new Date(lead.received_at)),
      nome: lead.nome,
      email: lead.email,
      telefone: lead.telefone_e164 ?? lead.telefone,
      empresa: lead.empresa,
      mensagem: lead.mensagem,
      origem: lead.origem,
      channel: lead.channel,
      context: CONTEXT_MEMBERS.flatMap((name) => (lead.context[name] ? [{ name, value: lead.context[name] }] : [])),
      legalBases: lead.legal_bases.map((basis) => ({ category: basis.category, type: basis.type, status: basis.status, revoked: basis.revoked_at !== null })),
    };
  }
}
