/** The client that sends attempts; tests provide one with their own resolver and connector. */
export const WEBHOOK_HTTP_CLIENT = Symbol('WEBHOOK_HTTP_CLIENT');
/** The resolver that checks a URL's host when an endpoint is created or changed. */
export const WEBHOOK_RESOLVER = Symbol('WEBHOOK_RESOLVER');
