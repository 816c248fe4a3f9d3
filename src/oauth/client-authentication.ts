import { AppError } from '../problem/app-error.js';

/** The challenge of a 401 invalid_client (RFC 6749 §5.2, RFC 7617: ids and secrets are read as UTF-8). */
export const BASIC_CHALLENGE = 'Basic realm="Leads API", charset="UTF-8"';

const BASIC = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** One answer for every failed client authentication, so that none says whether the client exists. */
export function invalidClient(detail = 'Client authentication failed.'): AppError {
  return new AppError('invalid_client', detail, { headers: { 'WWW-Authenticate': BASIC_CHALLENGE } });
}

/** RFC 6749 §3.1: a parameter sent without a value is treated as omitted. */
const given = (value: string | undefined): value is string => value !== undefined && value !== '';

/**
 * The client id and secret from the one authentication method the request used (RFC 6749 §2.3.1): HTTP Basic
 * (`client_secret_basic`, each part form-urlencoded before base64) or `client_id` and `client_secret` in the body
 * (`client_secret_post`). Both at once is `invalid_request`; neither, or a header that is not Basic, is
 * `invalid_client` with the Basic challenge.
 */
export function presentedCredentials(params: Record<string, string>, authorization: string[] | undefined): { clientId: string; secret: string } {
  if (authorization) {
    if (authorization.length > 1) throw new AppError('invalid_request', 'Send one Authorization header.');
    if (given(params.client_secret)) {
      throw new AppError('invalid_request', 'Authenticate the client one way: HTTP Basic or client_secret in the body, not both (RFC 6749 §2.3.1).');
    }
    const credentials = basicCredentials(authorization[0]);
    if (!credentials) throw invalidClient('The Authorization header must be HTTP Basic with the form-urlencoded client_id and client_secret.');
    if (given(params.client_id) && params.client_id !== credentials.clientId) {
      throw new AppError('invalid_request', 'The client_id in the body is not the one in the Authorization header.');
    }
    return credentials;
  }
  if (!given(params.client_secret)) {
    throw invalidClient('No client authentication: send HTTP Basic (client_secret_basic), or client_id and client_secret in the body (client_secret_post).');
  }
  if (!given(params.client_id)) throw new AppError('invalid_request', 'client_id is required with client_secret.');
  return { clientId: params.client_id, secret: params.client_secret };
}

function basicCredentials(header: string): { clientId: string; secret: string } | undefined {
  const match = BASIC.exec(header);
  if (!match) return undefined;
  try {
    const decoded = utf8.decode(Buffer.from(match[1], 'base64'));
    const colon = decoded.indexOf(':');
    if (colon < 0) return undefined;
    return { clientId: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    return undefined; // not UTF-8, or a broken percent-encoding
  }
}

/** application/x-www-form-urlencoded, as RFC 6749 §2.3.1 asks of both parts before they are joined and encoded. */
function formDecode(part: string): string {
  return decodeURIComponent(part.replace(/\+/g, ' '));
}
