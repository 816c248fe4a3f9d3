/** A message id, the id of every attempt (a webhook's `webhook-id`): `msg_` and a UUIDv7's hex digits, so ids sort by time. */
export function messageId(uuid: string): string {
  return `msg_${uuid.replaceAll('-', '')}`;
}

/** The body of every message: `{"type", "timestamp", "data"}`, serialised once and sent byte for byte on every attempt. */
export function messagePayload(type: string, timestamp: Date, data: unknown): string {
  return JSON.stringify({ type, timestamp: timestamp.toISOString(), data });
}
