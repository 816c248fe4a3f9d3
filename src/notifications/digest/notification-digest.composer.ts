import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../../config/config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { LeadReader, MAX_PAGE_SIZE } from '../../leads/lead-reader.service.js';
import { MAIL_TEMPLATES, MailTemplates } from '../../mail/mail-templates.js';
import { ComposedMail, ComposeInput, MailComposer, MailComposers } from '../mail-composers.js';
import { DIGEST_EVENT, DigestData } from './notification-digest.scheduler.js';

/** The most leads a digest lists: past this, the count and a link to the export. */
export const DIGEST_LEADS = MAX_PAGE_SIZE;

/**
 * Writes a `notification.digest` delivery at send time, from the leads as they are then (an erased lead is simply not
 * there): the day's accepted leads (a count, the first DIGEST_LEADS, the export's URL for the rest) and the leads
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
    const leads = total ? await this.reader.rows(filter, DIGEST_LEADS) : [];
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
