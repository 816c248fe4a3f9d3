import { Column, Entity, PrimaryColumn } from 'typeorm';
import { MILLISECONDS } from './webhook-endpoint.entity.js';

/**
 * The outbox: one message per event, written in the transaction of what it tells (a lead's). `id` is the
 * `webhook-id` of every attempt and replay; `payload` is the exact body that is signed and sent.
 */
@Entity('webhook_messages')
export class WebhookMessage {
  @PrimaryColumn({ type: 'varchar' })
  id: string;

  @Column({ type: 'varchar', name: 'event_type' })
  eventType: string;

  @Column({ type: 'text' })
  payload: string;

  @Column({ type: 'varchar', name: 'lead_id', nullable: true })
  leadId: string | null;

  /** Set only for a message aimed at one endpoint (webhook.test); others go to every subscribed endpoint. */
  @Column({ type: 'varchar', name: 'endpoint_id', nullable: true })
  endpointId: string | null;

  @Column({ type: 'bigint', name: 'created_at', transformer: MILLISECONDS })
  createdAt: number;

  /** When its delivery rows were made; null until then. */
  @Column({ type: 'bigint', name: 'dispatched_at', nullable: true, transformer: MILLISECONDS })
  dispatchedAt: number | null;
}
