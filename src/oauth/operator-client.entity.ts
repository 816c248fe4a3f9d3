import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * An operator client: one of the company's own confidential OAuth clients (client credentials grant), created and
 * managed by the `clients:*` commands. Its secrets are stored only as SHA-256 (hex).
 */
@Entity('operator_clients')
export class OperatorClient {
  /** `op_` and 128 random bits, base64url. */
  @PrimaryColumn({ type: 'varchar', name: 'client_id' })
  clientId: string;

  @Column({ type: 'varchar' })
  name: string;

  /** Space-separated, a subset of OPERATOR_SCOPES. */
  @Column({ type: 'varchar' })
  scopes: string;

  @Column({ type: 'varchar', name: 'secret_hash' })
  secretHash: string;

  /** The secret before the last rotation, accepted until previousSecretExpiresAt. */
  @Column({ type: 'varchar', name: 'previous_secret_hash', nullable: true })
  previousSecretHash: string | null;

  @Column({ name: 'previous_secret_expires_at', nullable: true, type: Date })
  previousSecretExpiresAt: Date | null;

  @Column({ name: 'created_at' })
  createdAt: Date;

  @Column({ name: 'rotated_at', nullable: true, type: Date })
  rotatedAt: Date | null;

  @Column({ name: 'revoked_at', nullable: true, type: Date })
  revokedAt: Date | null;
}
