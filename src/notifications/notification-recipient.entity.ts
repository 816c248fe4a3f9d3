import { Column, Entity, PrimaryColumn } from 'typeorm';
import { MILLISECONDS } from '../webhooks/webhook-endpoint.entity.js';

export type RecipientMode = 'immediate' | 'daily_digest';
export type RecipientLanguage = 'pt-BR' | 'en';
/**
 * pending: asked to confirm, gets nothing else; confirmed: gets what its mode says; unsubscribed: it said stop;
 * bouncing: three permanent failures in a row. Only resend-confirmation leads out of the last two (back to pending).
 */
export type RecipientStatus = 'pending' | 'confirmed' | 'unsubscribed' | 'bouncing';

/** An address told of new leads by e-mail: the e-mail channel's subscriber (docs/decisions/0035-email-notifications.md). */
@Entity('notification_recipients')
export class NotificationRecipient {
  @PrimaryColumn({ type: 'varchar' })
  id: string;

  /** As the operator gave it (trimmed): what the mail is sent to. */
  @Column({ type: 'varchar' })
  email: string;

  /** Lower case: one row per address. */
  @Column({ type: 'varchar', name: 'email_folded' })
  emailFolded: string;

  @Column({ type: 'varchar' })
  mode: RecipientMode;

  @Column({ type: 'varchar' })
  language: RecipientLanguage;

  @Column({ type: 'boolean', name: 'include_personal_data' })
  includePersonalData: boolean;

  @Column({ type: 'varchar' })
  status: RecipientStatus;

  /** Why it gets nothing (the last permanent failure, how it unsubscribed); null when nothing to say. */
  @Column({ type: 'varchar', name: 'status_reason', nullable: true })
  statusReason: string | null;

  /** SHA-256 (hex) of the single-use confirmation token in the last confirmation e-mail; null once used. */
  @Column({ type: 'varchar', name: 'confirmation_token_hash', nullable: true })
  confirmationTokenHash: string | null;

  @Column({ type: 'bigint', name: 'confirmation_expires_at', nullable: true, transformer: MILLISECONDS })
  confirmationExpiresAt: number | null;

  @Column({ type: 'bigint', name: 'confirmed_at', nullable: true, transformer: MILLISECONDS })
  confirmedAt: number | null;

  @Column({ type: 'bigint', name: 'unsubscribed_at', nullable: true, transformer: MILLISECONDS })
  unsubscribedAt: number | null;

  /** Permanent failures (5xx) in a row; the third makes it bouncing. */
  @Column({ type: 'integer', name: 'permanent_failures', default: 0 })
  permanentFailures: number;

  /** The outbox's: the first failure since the last success. */
  @Column({ type: 'bigint', name: 'failing_since', nullable: true, transformer: MILLISECONDS })
  failingSince: number | null;

  @Column({ type: 'bigint', name: 'created_at', transformer: MILLISECONDS })
  createdAt: number;

  @Column({ type: 'bigint', name: 'updated_at', transformer: MILLISECONDS })
  updatedAt: number;
}
