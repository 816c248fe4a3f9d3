import { Logger } from '@nestjs/common';

const logger = new Logger('InboxAudit');

/** Who changed a setting through the inbox: the person by user id (never by address), and the request. */
export interface Actor {
  userId: string;
  requestId: string;
}

/**
 * The audit line of a change made on a settings page, at info: the action, who, and the ids it touched. Never an
 * address, a URL or a secret (a webhook URL may hold a token).
 */
export function auditSettings(actor: Actor, action: string, target: Record<string, string | number | boolean>): void {
  logger.log({ audit: 'inbox_settings', action, user_id: actor.userId, request_id: actor.requestId, ...target }, 'inbox setting changed');
}
