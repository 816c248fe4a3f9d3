import { BODY_LIMIT_BYTES, HEADERS_TIMEOUT_MS, inKiB, inSeconds, REQUEST_TIMEOUT_MS } from '../server/http-limits.js';

/** Every error the service can answer with. The filter, /docs/errors, the contract and the tests all read this list. */
export interface CatalogEntry {
  status: number;
  title: string;
  /** What the client should do next; sent as the problem's `hint`. */
  hint: string;
  /** Longer explanation for the /docs/errors page. */
  description: string;
}

export const ERROR_CATALOG = {
  malformed_json: {
    status: 400,
    title: 'Malformed JSON',
    hint: 'Send a syntactically valid JSON object encoded as UTF-8.',
    description: 'The request body could not be parsed as JSON, or it was empty.',
  },
  body_not_object: {
    status: 400,
    title: 'Body is not a JSON object',
    hint: 'Wrap the fields in a JSON object: {"nome": "…", "email": "…"}.',
    description: 'The body parsed as JSON, but its top level is an array, a string, a number, a boolean or null.',
  },
  invalid_encoding: {
    status: 400,
    title: 'Body is not valid UTF-8',
    hint: 'Encode the request body as UTF-8 (RFC 8259 §8.1).',
    description: 'The body contains byte sequences that are not valid UTF-8.',
  },
  bad_request: {
    status: 400,
    title: 'Bad request',
    hint: 'Check the request line, headers and body framing.',
    description: 'The HTTP request itself was malformed (for example a body shorter than its Content-Length).',
  },
  idempotency_key_invalid: {
    status: 400,
    title: 'Invalid Idempotency-Key',
    hint: 'Send one Idempotency-Key of 1 to 255 printable ASCII characters, ideally a UUID.',
    description: 'The Idempotency-Key header is empty, too long, repeated or contains characters outside printable ASCII.',
  },
  invalid_query: {
    status: 400,
    title: 'Invalid query',
    hint: 'Fix the query parameters listed in errors[] (each names its parameter and a code) and send the request again.',
    description:
      'A query parameter is unknown, repeated, malformed or out of range, or a cursor is not one the service issued for these filters. Nothing was read.',
  },
  invalid_cursor: {
    status: 400,
    title: 'Invalid cursor',
    hint: 'Send the next_cursor of the page before, with the same e-mail address, or start again without a cursor.',
    description:
      'The cursor in the body was altered, or was given for another e-mail address (a data-subject access request pages only the person it began with). Nothing was read.',
  },
  verification_code_invalid: {
    status: 400,
    title: 'Wrong code',
    hint: 'Enter the six digits of the latest e-mail for this request; tries_left says how many tries remain.',
    description: 'The code is not the one sent for this privacy request. The fifth wrong code closes the request (409 privacy_request_locked).',
  },
  invalid_form: {
    status: 400,
    title: 'Invalid form',
    hint: 'Send the form as its page does: application/x-www-form-urlencoded in UTF-8, each field once (List-Unsubscribe=One-Click to unsubscribe, token to confirm).',
    description:
      'A POST to a confirmation or unsubscribe link whose body is not the form its page sends: another media type, bytes that are not UTF-8, a repeated or missing field. Nothing was changed.',
  },
  unsupported_identity_type: {
    status: 400,
    title: 'Unsupported identity type',
    hint: 'Use "anonymous" or "identity_assertion" to register, "refresh" to renew a registration.',
    description: 'The registration request named an identity type the service does not support.',
  },
  invalid_refresh_token: {
    status: 400,
    title: 'Invalid refresh token',
    hint: 'Register again at POST /api/v1/agent/identity: this identity cannot be renewed. Keep only the newest refresh token, and refresh one at a time.',
    description:
      'The refresh token is unknown, expired, or its registration was revoked; or it was already exchanged and its grace period is over, which revokes the registration with all its refresh tokens (reuse detection, RFC 9700 §4.14.2).',
  },
  invalid_request: {
    status: 400,
    title: 'Invalid OAuth request',
    hint: 'Send each parameter once, form-encoded (application/x-www-form-urlencoded): to /oauth2/token grant_type with assertion, or with one client authentication (HTTP Basic, or client_id and client_secret in the body); to /oauth2/revoke, token.',
    description:
      'OAuth 2.0 (RFC 6749 §5.2): a parameter is missing, repeated or malformed, the body is not form-encoded, or the client authenticated in more than one way.',
  },
  invalid_grant: {
    status: 400,
    title: 'Invalid grant',
    hint: 'Register again at /api/v1/agent/identity to obtain a fresh identity assertion.',
    description: 'OAuth 2.0 (RFC 7523 §3.1): the identity assertion is invalid, expired, revoked or not meant for this service.',
  },
  unsupported_grant_type: {
    status: 400,
    title: 'Unsupported grant type',
    hint: 'Use grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer (agents) or grant_type=client_credentials (operator clients).',
    description: 'OAuth 2.0 (RFC 6749 §5.2): the token endpoint supports the JWT-bearer grant and the client credentials grant only.',
  },
  invalid_scope: {
    status: 400,
    title: 'Invalid scope',
    hint: 'Request a subset of the scopes granted to the registration or client, or omit scope.',
    description: 'OAuth 2.0 (RFC 6749 §5.2): the requested scope is unknown or exceeds what the registration or client allows.',
  },
  authorization_pending: {
    status: 400,
    title: 'Authorization pending',
    hint: 'Poll the token endpoint again after the claim attempt’s interval (seconds).',
    description: 'RFC 8628 §3.5: the owner has not yet confirmed the claim on the service’s page.',
  },
  slow_down: {
    status: 400,
    title: 'Slow down',
    hint: 'Wait the claim attempt’s interval between two polls of the token endpoint.',
    description: 'RFC 8628 §3.5: two polls of one claim came closer than its interval.',
  },
  expired_token: {
    status: 400,
    title: 'Claim expired',
    hint: 'Start a new claim (POST /api/v1/agent/identity/claim) and show its new user code to the owner.',
    description: 'RFC 8628 §3.5: the claim attempt expired before its owner confirmed it.',
  },
  access_denied: {
    status: 400,
    title: 'Claim denied',
    hint: 'Start a new claim (POST /api/v1/agent/identity/claim); the owner must type both codes right.',
    description: 'RFC 8628 §3.5: the claim attempt ended on its page after five wrong codes.',
  },
  invalid_claim_token: {
    status: 400,
    title: 'Invalid claim token',
    hint: 'Send the claim_token the registration answered with, within its 24 hours; after that, register again.',
    description: 'The claim token is not one this service gave, has expired, or its registration was revoked. Nothing was sent.',
  },
  invalid_token: {
    status: 401,
    title: 'Invalid access token',
    hint: 'Obtain a new access token at /oauth2/token, or send the request without an Authorization header.',
    description: 'The bearer token is malformed, expired, revoked or was not issued by this service (RFC 6750 §3.1).',
  },
  invalid_client: {
    status: 401,
    title: 'Invalid client',
    hint: 'Check the client_id and client_secret: HTTP Basic (each form-urlencoded before base64) or both in the body, not both ways. A rotated secret stops after its grace period; a revoked client for good.',
    description:
      'OAuth 2.0 (RFC 6749 §5.2): client authentication failed: an unknown client, a wrong or expired secret, a revoked client, no authentication, or an unsupported method. One answer for all, with WWW-Authenticate: Basic.',
  },
  download_token_invalid: {
    status: 401,
    title: 'Invalid download token',
    hint: 'Send Authorization: Bearer <download_token> as the verification of this access request gave it, within its hour; after that, make the request again.',
    description:
      'A privacy request’s data was read without the download token its verification answered with, with another request’s, or after the token’s hour.',
  },
  authentication_required: {
    status: 401,
    title: 'Authentication required',
    hint: 'Send Authorization: Bearer <access token> with a token that grants the scope named in WWW-Authenticate.',
    description: 'The operation needs an access token and the request carried none (RFC 6750 §3).',
  },
  inbox_sign_in_required: {
    status: 401,
    title: 'Sign-in required',
    hint: 'Sign in to the inbox at /inbox/sign-in; a browser is sent there (303) with the page as its return path.',
    description: 'An inbox page or action needs a signed-in person, and the request carried no live session (none, ended, or timed out).',
  },
  captcha_failed: {
    status: 403,
    title: 'Captcha needed',
    hint: 'Solve the captcha of the page and send its token in the Captcha-Token header.',
    description:
      'This service is configured with a captcha provider, and a person’s own privacy request needs a token it accepts: none was sent, or it was wrong, expired or used. Nothing was sent.',
  },
  insufficient_scope: {
    status: 403,
    title: 'Insufficient scope',
    hint: 'Use an access token that grants every scope named in the WWW-Authenticate scope attribute.',
    description: 'The access token is valid, but it does not grant a scope the operation requires (RFC 6750 §3.1).',
  },
  origin_not_allowed: {
    status: 403,
    title: 'Origin not allowed',
    hint: 'Confirm from the page the e-mail links to (on this service), or from a client that sends no Origin header.',
    description:
      "The confirmation form was posted from a page of another site: its Origin header is not PUBLIC_BASE_URL's origin (a browser sends Origin: null from a page that hides it). Nothing was confirmed.",
  },
  csrf_token_invalid: {
    status: 403,
    title: 'Form token missing or invalid',
    hint: 'Post the form from its inbox page, which carries the token (_csrf field, or the X-CSRF-Token header for htmx).',
    description:
      'A state-changing inbox request did not carry the CSRF token of its session (or, before sign-in, of its browser), or it came from a page of another origin. Nothing was changed.',
  },
  not_found: {
    status: 404,
    title: 'Not found',
    hint: 'Check the path; the API lives under /api/v1 and its contract is at /docs/openapi-leads.json.',
    description: 'No resource exists at this path.',
  },
  privacy_request_not_found: {
    status: 404,
    title: 'Privacy request not found',
    hint: 'Use the id that POST /api/v1/privacy/requests answered with.',
    description: 'No privacy request made by a person has this id.',
  },
  lead_not_found: {
    status: 404,
    title: 'Lead not found',
    hint: 'Check the id: it is the one POST /api/v1/lead answered, and GET /api/v1/leads lists them.',
    description: 'No stored lead has this id.',
  },
  webhook_not_found: {
    status: 404,
    title: 'Webhook endpoint not found',
    hint: 'Check the id: it is the one POST /api/v1/webhooks answered, and GET /api/v1/webhooks lists them.',
    description: 'No webhook endpoint has this id (a deleted endpoint is gone for good, with its log).',
  },
  notification_recipient_not_found: {
    status: 404,
    title: 'Notification recipient not found',
    hint: 'Check the id: it is the one POST /api/v1/notification-recipients answered, and GET /api/v1/notification-recipients lists them.',
    description: 'No notification recipient has this id (a deleted recipient is gone for good, with its log).',
  },
  notification_link_invalid: {
    status: 404,
    title: 'Link not valid',
    hint: 'Use the link of the newest e-mail; an operator can send a new confirmation (POST /api/v1/notification-recipients/{id}/resend-confirmation).',
    description:
      'The confirmation or unsubscribe link is unknown, altered, expired (a confirmation link lasts 7 days), already used, replaced by a newer one, or its recipient was deleted. The answer is the same in every case. Nothing was changed.',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    hint: 'Use one of the methods listed in the Allow header.',
    description: 'The path exists but does not support this HTTP method; the Allow header lists the ones it does.',
  },
  request_timeout: {
    status: 408,
    title: 'Request timeout',
    hint: `Send the whole request line and headers within ${inSeconds(HEADERS_TIMEOUT_MS)}, and the whole request within ${inSeconds(REQUEST_TIMEOUT_MS)}.`,
    description: 'The client was too slow: the headers or the body did not arrive in time, so the connection is closed.',
  },
  registration_claimed: {
    status: 409,
    title: 'Registration already claimed',
    hint: 'Nothing to do: the registration already speaks for its owner; refresh it for the verified assertion.',
    description: 'The registration the claim token names has been claimed; a claim happens once.',
  },
  privacy_request_locked: {
    status: 409,
    title: 'Privacy request locked',
    hint: 'Make the request again (POST /api/v1/privacy/requests) for a new code.',
    description: 'Five wrong codes were entered for this request: it is closed, and no code verifies it any more. Nothing was done.',
  },
  privacy_request_verified: {
    status: 409,
    title: 'Privacy request already verified',
    hint: 'The answer was given when the code was entered; an access request’s download token reads the data for an hour. An erasure or revocation whose first run failed is carried out within minutes.',
    description:
      'The code of this request was already entered: the request was carried out then, or (an erasure or revocation whose first run failed) is being carried out. Nothing was done again.',
  },
  idempotency_request_in_progress: {
    status: 409,
    title: 'Request with this Idempotency-Key in progress',
    hint: 'Wait for the first request to finish, then retry with the same key to receive its answer.',
    description: 'A request with the same Idempotency-Key from the same caller is still being processed.',
  },
  webhook_limit_reached: {
    status: 409,
    title: 'Webhook endpoint limit reached',
    hint: 'Delete an endpoint you no longer use (DELETE /api/v1/webhooks/{id}), or point one at a receiver that fans out.',
    description: 'There are already as many webhook endpoints as the service keeps (WEBHOOK_MAX_ENDPOINTS); this one was not created.',
  },
  notification_recipient_exists: {
    status: 409,
    title: 'Notification recipient exists',
    hint: 'Change the existing recipient (PATCH), or send it a new confirmation (resend-confirmation); the problem carries its id as recipient_id.',
    description: 'A recipient with this address (in any letter case) exists already; this one was not created.',
  },
  notification_recipient_not_confirmed: {
    status: 409,
    title: 'Notification recipient not confirmed',
    hint: 'Wait until the address confirms (its status becomes confirmed), or send a new confirmation with resend-confirmation.',
    description:
      'The recipient is pending, unsubscribed or bouncing: until its address confirms it gets nothing but the confirmation e-mail. Nothing was sent.',
  },
  notification_recipient_confirmed: {
    status: 409,
    title: 'Notification recipient already confirmed',
    hint: 'Nothing to do: the address is confirmed. Send it a test message with POST /api/v1/notification-recipients/{id}/test.',
    description: 'A confirmation was asked for an address that is confirmed already. Nothing was sent and its status did not change.',
  },
  privacy_request_expired: {
    status: 410,
    title: 'Privacy request expired',
    hint: 'Make the request again (POST /api/v1/privacy/requests) for a new code.',
    description: 'The code of this request was not entered within its 10 minutes. Nothing was done.',
  },
  lead_erased: {
    status: 410,
    title: 'Lead erased',
    hint: 'Do not send this lead again: the person asked for their data to be erased. A new submission needs a new Idempotency-Key and a new decision to collect it.',
    description:
      'The Idempotency-Key names a lead that was erased (a data-subject request or the retention period); the key is kept, without the data, for the rest of its 24 hours so that a retry does not store the lead again. Nothing was stored.',
  },
  payload_too_large: {
    status: 413,
    title: 'Payload too large',
    hint: `Keep the body under ${inKiB(BODY_LIMIT_BYTES)}.`,
    description: 'The request body (after decompression) is larger than the service accepts.',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    hint: 'Send Content-Type: application/json with UTF-8 (or no charset).',
    description: 'The Content-Type, its charset or the Content-Encoding of the body is not accepted by this endpoint.',
  },
  validation_failed: {
    status: 422,
    title: 'Validation failed',
    hint: 'Fix the fields listed in errors[] (each has a JSON Pointer and a code) and send the request again.',
    description: 'The body is a JSON object, but one or more fields break the rules of the contract. Nothing was stored.',
  },
  idempotency_key_reused: {
    status: 422,
    title: 'Idempotency-Key reused with a different body',
    hint: 'Use a new Idempotency-Key for a different request.',
    description: 'The Idempotency-Key was already used by this caller in the last 24 hours with a different body.',
  },
  rate_limited: {
    status: 429,
    title: 'Too many requests',
    hint: 'Wait for the number of seconds in Retry-After; register an agent and send a bearer token for a higher quota.',
    description: 'The caller exhausted its rate-limit quota; RateLimit and RateLimit-Policy describe the quota.',
  },
  verification_rate_limited: {
    status: 429,
    title: 'Too many codes',
    hint: 'Wait for the number of seconds in Retry-After, and look for the codes already sent (and in the spam folder).',
    description:
      'An address gets at most 3 codes an hour, a client address 30, and the service VERIFICATION_MAIL_DAILY_LIMIT a day in all (counted for every instance), so that nobody can flood a mailbox with them. Nothing was stored or sent.',
  },
  confirmation_rate_limited: {
    status: 429,
    title: 'Too many confirmation e-mails',
    hint: 'Wait for the number of seconds in Retry-After; ask the person to look for the e-mails already sent (and their spam folder).',
    description:
      'An address gets at most 3 confirmation e-mails a day (creations and resends together, counted for every instance), so that the service cannot be used to flood a mailbox. Nothing was stored or sent.',
  },
  request_header_fields_too_large: {
    status: 431,
    title: 'Request header fields too large',
    hint: 'Send fewer and shorter headers and a shorter URL.',
    description: 'The request line and headers together exceed the server limit, or there are more header fields than it accepts.',
  },
  internal_error: {
    status: 500,
    title: 'Internal error',
    hint: 'Retry later; if it persists, report the request_id.',
    description: 'An unexpected error occurred. The request_id identifies it in the service logs.',
  },
  export_busy: {
    status: 503,
    title: 'Export busy',
    hint: 'Retry after the number of seconds in Retry-After, when a running export has finished.',
    description:
      'As many lead exports as the service runs at once (EXPORT_MAX_CONCURRENT per instance) are streaming; this one was not started. Nothing was read.',
  },
  service_unavailable: {
    status: 503,
    title: 'Service unavailable',
    hint: 'Retry after the number of seconds in Retry-After.',
    description: 'A dependency the request needs (such as the database) is unavailable. Nothing was stored.',
  },
} as const satisfies Record<string, CatalogEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

/** Codes carried by each entry of a validation problem's errors[]. */
export const FIELD_ERROR_CODES = [
  'required',
  'invalid_type',
  'too_short',
  'too_long',
  'invalid_format',
  'invalid_characters',
  'unknown_field',
  'forbidden_key',
  'duplicate_key',
  'nesting_too_deep',
  'too_many_items',
  'invalid_value',
  'invalid_date',
  'out_of_range',
  'duplicate',
  'empty_patch',
  'invalid_url',
  'scheme_not_allowed',
  'credentials_not_allowed',
  'address_not_allowed',
  'unresolvable_host',
  'unknown_event',
] as const;

export type FieldErrorCode = (typeof FIELD_ERROR_CODES)[number];

export interface FieldError {
  pointer: string;
  code: FieldErrorCode;
  detail: string;
}

/** Codes carried by each entry of an invalid_query problem's errors[]. */
export const QUERY_ERROR_CODES = [
  'required',
  'unknown_parameter',
  'repeated_parameter',
  'invalid_format',
  'too_short',
  'too_long',
  'out_of_range',
  'invalid_cursor',
] as const;

export type QueryErrorCode = (typeof QUERY_ERROR_CODES)[number];

/** What is wrong with one query parameter, named as it appears in the URL. */
export interface QueryError {
  parameter: string;
  code: QueryErrorCode;
  detail: string;
}

/** An entry of a problem's errors[]: a body member located by a JSON Pointer, or a query parameter by its name. */
export type ProblemError = FieldError | QueryError;

export const MAX_FIELD_ERRORS = 20;
