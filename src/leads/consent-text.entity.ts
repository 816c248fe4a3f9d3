import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Each distinct consent wording, once: the proof of what a person agreed to (LGPD Art. 8 §2). */
@Entity('consent_texts')
export class ConsentText {
  /** SHA-256 (hex) of the text, as the leads' legal bases name it. */
  @PrimaryColumn({ type: 'varchar' })
  sha256: string;

  @Column({ type: 'text' })
  text: string;

  /** When a lead first brought it, in milliseconds (written only: PostgreSQL would read a bigint back as a string). */
  @Column({ type: 'bigint', name: 'created_at' })
  createdAt: number;
}
