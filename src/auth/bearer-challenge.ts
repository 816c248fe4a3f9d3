/**
 * A `WWW-Authenticate: Bearer` challenge (RFC 6750 §3) that also names the protected resource metadata (RFC 9728 §5.1),
 * where a client finds the authorization server and the scopes.
 */
export function bearerChallenge(publicBaseUrl: string, params: { error?: string; scope?: string } = {}): string {
  const attributes = Object.entries(params)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}="${value}"`);
  attributes.push(`resource_metadata="${publicBaseUrl}/.well-known/oauth-protected-resource"`);
  return `Bearer ${attributes.join(', ')}`;
}
