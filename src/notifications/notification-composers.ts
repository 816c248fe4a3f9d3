import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { LeadView } from '../leads/lead-reader.service.js';
import { MAIL_TEMPLATES, type MailTemplates } from '../mail/mail-templates.js';
import type { ComposedMail, ComposeInput, MailComposer } from './mail-composers.js';
import { CONFIRMATION_EVENT, ConfirmationData, TEST_EVENT } from './notification-events.js';
import { RecipientLinks, tokenHash } from './recipient-links.js';

/** `lead.received`: one new accepted lead, with `Reply-To` the lead's address so that answering answers the person. */
@Injectable()
export class LeadNotificationComposer implements MailComposer {
  readonly eventType = 'lead.received';
  private readonly base: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(MAIL_TEMPLATES) private readonly templates: MailTemplates,
  ) {
    this.base = config.publicBaseUrl;
  }

  async compose({ data, recipient, unsubscribeUrl }: ComposeInput): Promise<ComposedMail> {
    const lead = data as LeadView;
    const personal = recipient.includePersonalData;
    const words = this.templates.leadNotification(recipient.language, {
      // Without personal data the template is not even given it: only the id and the link can show.
      lead: personal ? lead : withoutPersonalData(lead),
      leadUrl: `${this.base}/api/v1/leads/${lead.id}`,
      includePersonalData: personal,
      unsubscribeUrl,
    });
    return { ...words, ...(personal ? { replyTo: lead.email } : {}), leadIds: [lead.id] };
  }
}

/** `notification.confirmation`: the link to the page whose button confirms; nothing once replaced, used or confirmed. */
@Injectable()
export class ConfirmationComposer implements MailComposer {
  readonly eventType = CONFIRMATION_EVENT;

  constructor(
    @Inject(MAIL_TEMPLATES) private readonly templates: MailTemplates,
    private readonly links: RecipientLinks,
  ) {}

  async compose({ data, recipient }: ComposeInput): Promise<ComposedMail | null> {
    const { nonce, expires_at: expiresAt } = data as ConfirmationData;
    const token = this.links.confirmationToken(recipient.id, nonce);
    // A resend made a newer token (this one is dead), or the address confirmed meanwhile: this e-mail would mislead.
    if (recipient.status !== 'pending' || recipient.confirmationTokenHash !== tokenHash(token)) return null;
    return this.templates.confirmation(recipient.language, { confirmUrl: this.links.confirmUrl(token), expiresAt: new Date(expiresAt) });
  }
}

/** `notification.test`: an operator's test of a confirmed recipient. */
@Injectable()
export class TestComposer implements MailComposer {
  readonly eventType = TEST_EVENT;

  constructor(@Inject(MAIL_TEMPLATES) private readonly templates: MailTemplates) {}

  async compose({ recipient, unsubscribeUrl }: ComposeInput): Promise<ComposedMail> {
    return this.templates.test(recipient.language, { unsubscribeUrl });
  }
}

/** A lead with nothing of the person left: what a recipient without personal data may be shown. */
function withoutPersonalData(lead: LeadView): LeadView {
  return {
    ...lead,
    nome: '',
    email: '',
    telefone: null,
    telefone_e164: null,
    empresa: null,
    mensagem: null,
    origem: null,
    legal_bases: [],
    context: {},
  };
}
