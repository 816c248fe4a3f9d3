import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A message's delivery to one subscriber of one channel, as a lead's transaction writes it for the subscribers it
 * knows (Outbox, SQLite). The fan-out and the worker write these rows with their own SQL (OutboxStore); the table keeps
 * its first name.
 */
@Entity('webhook_deliveries')
export class OutboxDelivery {
  @PrimaryColumn({ type: 'varchar', name: 'message_id' })
  messageId: string;

  @PrimaryColumn({ type: 'varchar', name: 'endpoint_id' })
  subscriberId: string;

  @Column({ type: 'varchar' })
  channel: string;

  @Column({ type: 'bigint', name: 'message_created_at' })
  messageCreatedAt: number;

  @Column({ type: 'varchar' })
  state: string;

  @Column({ type: 'integer' })
  attempts: number;

  @Column({ type: 'integer' })
  step: number;

  @Column({ type: 'bigint', name: 'next_attempt_at', nullable: true })
  nextAttemptAt: number | null;

  @Column({ type: 'varchar', name: 'lease_owner', nullable: true })
  leaseOwner: string | null;

  @Column({ type: 'bigint', name: 'lease_until', nullable: true })
  leaseUntil: number | null;

  @Column({ type: 'bigint', name: 'updated_at' })
  updatedAt: number;
}
