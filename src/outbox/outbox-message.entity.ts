import { Column, Entity, PrimaryColumn, ValueTransformer } from 'typeorm';

/** bigint milliseconds: the pg driver answers bigint as a string. */
const MILLISECONDS: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | number | null) => (value === null ? null : Number(value)),
};

/**
 * The outbox: one message per event, written in the transaction of what it tells (a lead's). `id` is the id of every
 * attempt and replay (a webhook's `webhook-id`); `payload` is the exact body every channel sends. The table keeps its
 * first name, from when webhooks were the only channel.
 */
@Entity('webhook_messages')
export class OutboxMessage {
  @PrimaryColumn({ type: 'varchar' })
  id: string;

  @Column({ type: 'varchar', name: 'event_type' })
  eventType: string;

  @Column({ type: 'text' })
  payload: string;

  @Column({ type: 'varchar', name: 'lead_id', nullable: true })
  leadId: string | null;

  /** Set only for a message aimed at one subscriber (webhook.test); others go to every subscribed one. */
  @Column({ type: 'varchar', name: 'endpoint_id', nullable: true })
  subscriberId: string | null;

  @Column({ type: 'bigint', name: 'created_at', transformer: MILLISECONDS })
  createdAt: number;

  /** The W3C traceparent of the request that wrote it (tracing on): its deliveries continue that trace. */
  @Column({ type: 'varchar', name: 'trace_parent', nullable: true })
  traceParent: string | null;

  /** When its delivery rows were made; null until then. */
  @Column({ type: 'bigint', name: 'dispatched_at', nullable: true, transformer: MILLISECONDS })
  dispatchedAt: number | null;
}
