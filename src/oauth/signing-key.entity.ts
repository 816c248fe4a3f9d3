import { Column, Entity, PrimaryColumn } from 'typeorm';

export type KeyPurpose = 'assertion' | 'access_token';

/** A signing key shared by every instance through the database. The newest unretired key of a purpose signs. */
@Entity('signing_keys')
export class SigningKey {
  @PrimaryColumn({ type: 'varchar' })
  kid: string;

  @Column({ type: 'varchar' })
  purpose: KeyPurpose;

  @Column({ type: 'varchar' })
  alg: string;

  @Column({ type: 'text', name: 'public_jwk' })
  publicJwk: string;

  @Column({ type: 'text', name: 'private_jwk' })
  privateJwk: string;

  @Column({ name: 'created_at' })
  createdAt: Date;

  @Column({ name: 'retired_at', nullable: true, type: Date })
  retiredAt: Date | null;
}
