import { Column, Entity, PrimaryColumn, ValueTransformer } from 'typeorm';

/** bigint columns hold Unix milliseconds; PostgreSQL's driver returns them as strings. */
export const MILLISECONDS: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | number | null) => (value === null ? null : Number(value)),
};

export type WebhookEndpointStatus = 'enabled' | 'disabled';

/** Where leads are delivered. Secrets are sealed with the service key (SecretBox); times are Unix milliseconds. */
@Entity('webhook_endpoints')
export class WebhookEndpoint {
  @PrimaryColumn({ type: 'varchar' })
  id: string;

  @Column({ type: 'varchar' })
  url: string;

  /** A JSON array of event types. */
  @Column({ type: 'varchar' })
  events: string;

  @Column({ type: 'varchar', nullable: true })
  description: string | null;

  @Column({ type: 'text' })
  secret: string;

  @Column({ type: 'text', name: 'previous_secret', nullable: true })
  previousSecret: string | null;

  @Column({ type: 'bigint', name: 'previous_secret_expires_at', nullable: true, transformer: MILLISECONDS })
  previousSecretExpiresAt: number | null;

  @Column({ type: 'varchar' })
  status: WebhookEndpointStatus;

  @Column({ type: 'varchar', name: 'disabled_reason', nullable: true })
  disabledReason: string | null;

  /** When it began failing with no success since; null while it succeeds. */
  @Column({ type: 'bigint', name: 'failing_since', nullable: true, transformer: MILLISECONDS })
  failingSince: number | null;

  @Column({ type: 'bigint', name: 'created_at', transformer: MILLISECONDS })
  createdAt: number;

  @Column({ type: 'bigint', name: 'updated_at', transformer: MILLISECONDS })
  updatedAt: number;
}
