import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A stored lead; the row holds the normalised fields exactly as the sandbox would return them. */
@Entity('leads')
export class Lead {
  @PrimaryColumn({ type: 'varchar' })
  id: string;

  @Column({ type: 'varchar' })
  nome: string;

  @Column({ type: 'varchar' })
  email: string;

  @Column({ type: 'varchar', nullable: true })
  telefone: string | null;

  @Column({ type: 'varchar', name: 'telefone_e164', nullable: true })
  telefoneE164: string | null;

  @Column({ type: 'varchar', nullable: true })
  empresa: string | null;

  @Column({ type: 'text', nullable: true })
  mensagem: string | null;

  @Column({ type: 'varchar', nullable: true })
  origem: string | null;

  /** The agent registration that sent the lead with a bearer token; null for anonymous callers. */
  @Column({ type: 'varchar', name: 'registration_id', nullable: true })
  registrationId: string | null;

  // The column type is left to each driver (datetime / timestamp); the migration creates timestamptz on PostgreSQL.
  @Column({ name: 'received_at' })
  receivedAt: Date;
}
