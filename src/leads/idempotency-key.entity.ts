import { Column, Entity, PrimaryColumn } from 'typeorm';

export type IdempotencyState = 'pending' | 'done';

/** One Idempotency-Key of one caller: the body fingerprint, the lead it creates, and once done, the answer to replay. */
@Entity('idempotency_keys')
export class IdempotencyKey {
  @PrimaryColumn({ type: 'varchar' })
  scope: string;

  @PrimaryColumn({ type: 'varchar' })
  key: string;

  @Column({ type: 'varchar' })
  fingerprint: string;

  @Column({ type: 'varchar', name: 'lead_id' })
  leadId: string;

  @Column({ type: 'varchar' })
  state: IdempotencyState;

  @Column({ type: 'text', name: 'response_body', nullable: true })
  responseBody: string | null;

  /** Its lead was erased: fingerprint, lead id and answer are cleared, scope and key replaced by ERASED_SCOPE and erasedKey(), and a retry gets 410 lead_erased until it expires. */
  @Column({ type: 'boolean', default: false })
  erased: boolean;

  @Column({ name: 'created_at' })
  createdAt: Date;

  @Column({ name: 'expires_at' })
  expiresAt: Date;
}
