import { Entity, PrimaryColumn } from 'typeorm';

/**
 * One address an agent registration names (in `contacts`, or as its verified_email assertion), case-folded as leads'
 * `email_folded` is: how an erasure finds the registrations that name a person without reading them all.
 */
@Entity('agent_registration_addresses')
export class AgentRegistrationAddress {
  @PrimaryColumn({ type: 'varchar', name: 'registration_id' })
  registrationId: string;

  @PrimaryColumn({ type: 'varchar', name: 'email_folded' })
  emailFolded: string;
}
