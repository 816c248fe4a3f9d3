import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A revoked access token, kept until it would have expired anyway. */
@Entity('revoked_tokens')
export class RevokedToken {
  @PrimaryColumn({ type: 'varchar' })
  jti: string;

  @Column({ name: 'expires_at' })
  expiresAt: Date;
}
