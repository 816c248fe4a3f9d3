/** The e-mail channel's name, stored with its deliveries and attempts. */
export const EMAIL_CHANNEL = { name: 'email' } as const;

/** The outbox events of the e-mail channel besides lead.received, each aimed at one recipient (Outbox.publish). */
export const CONFIRMATION_EVENT = 'notification.confirmation';
export const TEST_EVENT = 'notification.test';

/** A confirmation message's data: the token is derived from the nonce (RecipientLinks), never stored. */
export interface ConfirmationData {
  recipient_id: string;
  nonce: string;
  /** Epoch milliseconds. */
  expires_at: number;
}
