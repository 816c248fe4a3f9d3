import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../../config/config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { LeadReader } from '../../leads/lead-reader.service.js';
import { DIGEST_TABLE_MAX } from '../../mail/eta-mail-templates.js';
import { MAIL_TEMPLATES, MailTemplates } from '../../mail/mail-templates.js';
import { ComposedMail, ComposeInput, MailComposer, MailComposers } from '../mail-composers.js';
import { DIGEST_EVENT, DigestData } from './notification-digest.scheduler.js';

/**
 * Writes a `notification.digest` delivery at send time, from the leads as they are then (an erased lead is simply not
 * there): the day's accepted leads (a count, the first DIGEST_TABLE_MAX, the export's URL) and the leads
 * awaiting review, in the recipient's language. Null when erasure left nothing to say.
 */
@Injectable()
export class NotificationDigestComposer implements MailComposer, OnModuleInit {
  readonly eventType = DIGEST_EVENT;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(MAIL_TEMPLATES) private readonly templates: MailTemplates,
    private readonly reader: LeadReader,
    private readonly composers: MailComposers,
  ) {}

  onModuleInit(): void {
    this.composers.register(this);
  }

  async compose({ data, recipient, unsubscribeUrl }: ComposeInput): Promise<ComposedMail | null> {
    const { day, since, until } = data as DigestData;
    const filter = { screening: 'accepted' as const, since: new Date(since), until: new Date(until) };
    const total = await this.reader.count(filter);
    const leads = total ? await this.reader.rows(filter, DIGEST_TABLE_MAX) : [];
    const awaitingReview = await this.reader.heldCount({});
    if (total === 0 && awaitingReview === 0) return null;
    const exportUrl = `${this.config.publicBaseUrl}/api/v1/leads/export?since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}`;
    const mail = this.templates.digest(recipient.language, {
      day,
      total,
      leads,
      exportUrl,
      awaitingReview,
      includePersonalData: recipient.includePersonalData,
      unsubscribeUrl,
    });
    return { ...mail, leadIds: recipient.includePersonalData ? leads.map((lead) => lead.id) : [] };
  }
}
