import type { LeadView } from '../leads/lead-reader.service.js';

/** The languages a person reads our e-mail in: Portuguese first. */
export type MailLanguage = 'pt-BR' | 'en';

/** One message's words: its subject, and its text and HTML parts. */
export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

/** Every notification carries the way out (List-Unsubscribe's https URL, also shown in the body). */
interface Unsubscribable {
  unsubscribeUrl: string;
}

/** "Confirm that this address should be told of new leads": the link opens a page whose first form confirms (by POST). */
export interface ConfirmationMail {
  confirmUrl: string;
  expiresAt: Date;
}

/**
 * One new accepted lead. With `includePersonalData` false only `lead.id` and `leadUrl` may appear (not its name, address,
 * telephone, company, message or attribution).
 */
export interface LeadNotificationMail extends Unsubscribable {
  lead: LeadView;
  leadUrl: string;
  includePersonalData: boolean;
}

/** The previous day's accepted leads on the TIME_ZONE clock, and what awaits review. */
export interface DigestMail extends Unsubscribable {
  /** The day, YYYY-MM-DD. */
  day: string;
  total: number;
  /** At most 200: past that, the count and `exportUrl` only. */
  leads: LeadView[];
  exportUrl: string;
  awaitingReview: number;
  includePersonalData: boolean;
}

/**
 * A verification code (src/verification/): the code is in the subject and is the first six-digit number of the text
 * part, so that a mail client or a test finds it; no word of the mail comes from whoever asked for it.
 */
export interface VerificationMail {
  code: string;
  minutes: number;
}

/** The code that confirms a person's own privacy request (src/privacy/): the same rules as VerificationMail. */
export interface PrivacyCodeMail extends VerificationMail {
  request: 'access' | 'erasure' | 'consent_revocation';
}

/** A recipient's test message (`POST …/{id}/test`). */
export type TestMail = Unsubscribable;

/** The words of every e-mail the service sends, in both languages (src/mail/templates/, embedded by the release build). */
export interface MailTemplates {
  confirmation(language: MailLanguage, mail: ConfirmationMail): RenderedMail;
  leadNotification(language: MailLanguage, mail: LeadNotificationMail): RenderedMail;
  digest(language: MailLanguage, mail: DigestMail): RenderedMail;
  test(language: MailLanguage, mail: TestMail): RenderedMail;
  verification(language: MailLanguage, mail: VerificationMail): RenderedMail;
  privacyCode(language: MailLanguage, mail: PrivacyCodeMail): RenderedMail;
  claimCode(language: MailLanguage, mail: VerificationMail): RenderedMail;
}

export const MAIL_TEMPLATES = Symbol('MAIL_TEMPLATES');
