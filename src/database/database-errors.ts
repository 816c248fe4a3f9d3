/** Error codes that mean "the database cannot be reached or cannot work now", as opposed to a bug or bad data. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_IOERR',
  'SQLITE_FULL',
  'SQLITE_CANTOPEN',
  'SQLITE_READONLY',
]);
/** PostgreSQL SQLSTATE classes: 08 connection, 53 insufficient resources, 57 operator intervention. */
const UNAVAILABLE_SQLSTATE = /^(08|53|57)/;
const UNAVAILABLE_MESSAGES =
  /(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is not established|pool is probably full|The database connection is not open|Cannot use a pool after calling end|Driver not Connected|Query read timeout)/i;

export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error as { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; depth++) {
    const code = typeof e.code === 'string' ? e.code : '';
    if (UNAVAILABLE_CODES.has(code) || (code.length === 5 && UNAVAILABLE_SQLSTATE.test(code))) return true;
    if (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message)) return true;
    e = (e.driverError ?? e.cause) as typeof e;
  }
  return false;
}

/** A primary-key or unique constraint refused the row (SQLite or PostgreSQL). */
export function isUniqueViolation(error: unknown): boolean {
  const driverError = (error as { driverError?: { code?: unknown } } | undefined)?.driverError ?? error;
  const code = (driverError as { code?: unknown } | undefined)?.code;
  return code === '23505' || (typeof code === 'string' && /^SQLITE_CONSTRAINT_(PRIMARYKEY|UNIQUE)$/.test(code));
}
