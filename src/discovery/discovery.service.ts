import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { KeyStore, PublicJwk } from '../oauth/key-store.service.js';
import { ALL_SCOPES } from '../auth/scopes.js';
import { CLAIM_GRANT } from '../identity/claims.service.js';
import { CLIENT_CREDENTIALS_GRANT, JWT_BEARER_GRANT } from '../oauth/token.service.js';

/**
 * The documents an agent needs, knowing only PUBLIC_BASE_URL. Issuer and resource are that origin, byte for byte.
 * No authorization endpoint and no ID tokens exist, so no field claims otherwise (and no array is empty).
 */
@Injectable()
export class DiscoveryService {
  readonly protectedResource: Record<string, unknown>;
  readonly authorizationServer: Record<string, unknown>;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly keys: KeyStore,
  ) {
    const base = config.publicBaseUrl;
    this.protectedResource = {
      resource: base,
      authorization_servers: [base],
      bearer_methods_supported: ['header'],
      scopes_supported: ALL_SCOPES,
      resource_name: 'Leads API',
      resource_documentation: `${base}/docs/agents`,
    };
    this.authorizationServer = {
      issuer: base,
      token_endpoint: `${base}/oauth2/token`,
      jwks_uri: `${base}/.well-known/jwks.json`,
      revocation_endpoint: `${base}/oauth2/revoke`,
      grant_types_supported: [JWT_BEARER_GRANT, CLIENT_CREDENTIALS_GRANT, CLAIM_GRANT],
      // `none` for agents (JWT-bearer grant), the two secret methods for operator clients (client credentials).
      token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
      revocation_endpoint_auth_methods_supported: ['none'],
      scopes_supported: ALL_SCOPES,
      service_documentation: `${base}/docs/agents`,
      agent_auth: {
        identity_endpoint: `${base}/api/v1/agent/identity`,
        identity_types_supported: ['anonymous', 'identity_assertion', 'service_auth', 'refresh'],
        identity_assertion: { assertion_types_supported: ['verified_email'] },
        // The claim ceremony: its start, the claim body's types, and the grant the agent polls.
        claim_endpoint: `${base}/api/v1/agent/identity/claim`,
        claim_types_supported: ['login_hint'],
        claim_grant_type: CLAIM_GRANT,
      },
    };
  }

  jwks(): Promise<{ keys: PublicJwk[] }> {
    return this.keys.jwks();
  }
}
