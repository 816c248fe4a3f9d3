/** Only the parts of an error that are safe to log: driver errors carry query parameters (e-mails, phones). */
export function safeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  return { type: error.name, message: error.message, code: (error as { code?: unknown }).code, stack: error.stack };
}
