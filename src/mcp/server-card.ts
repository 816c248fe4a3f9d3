import { createHash } from 'node:crypto';
import { AppConfig } from '../config/config.js';
import { MCP_SERVER_NAME } from './mcp-server.factory.js';

/** Protocol revisions the SDK serves at /mcp: the newest, and the 2025 ones statelessly. */
export const MCP_PROTOCOL_VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18'];

/**
 * The MCP server card (experimental server-card extension, SEP-2127 draft): identity and remote endpoint, built from
 * PUBLIC_BASE_URL; name and version match what the server reports on initialize.
 */
export function buildServerCard(config: AppConfig): { body: string; etag: string } {
  const base = config.publicBaseUrl;
  const host = new URL(base).hostname;
  const card = {
    $schema: 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json',
    name: `${host.split('.').reverse().join('.')}/${MCP_SERVER_NAME}`,
    version: config.version,
    title: 'Leads API',
    description: 'Validate and submit marketing leads; read service health, company info and documentation.',
    websiteUrl: `${base}/docs`,
    remotes: [
      {
        type: 'streamable-http',
        url: `${base}/mcp`,
        supportedProtocolVersions: MCP_PROTOCOL_VERSIONS,
        headers: [
          {
            name: 'Authorization',
            description:
              'Optional OAuth 2.0 bearer token from /oauth2/token: an agent’s (JWT-bearer grant) raises rate limits; an operator client’s with leads:read also opens the lead-reading tools. Anonymous calls work with lower rate limits.',
            isRequired: false,
            isSecret: true,
            value: 'Bearer {access_token}',
          },
          // With a captcha provider, an anonymous submit_lead without its token is held for review (README, Screening).
          ...(config.captcha
            ? [
                {
                  name: 'Captcha-Token',
                  description: `Optional for anonymous callers: a ${config.captcha.provider === 'turnstile' ? 'Cloudflare Turnstile' : 'hCaptcha'} token solved by the person whose lead submit_lead sends; without it (or a bearer token) the lead waits for review.`,
                  isRequired: false,
                  isSecret: true,
                },
              ]
            : []),
        ],
        authentication: { required: false, schemes: ['bearer'] },
      },
    ],
    _meta: {
      'com.leads-api/auth': {
        required: false,
        benefit: 'higher rate limits',
        protectedResourceMetadata: `${base}/.well-known/oauth-protected-resource`,
        tokenEndpoint: `${base}/oauth2/token`,
        agentRegistration: `${base}/api/v1/agent/identity`,
        guide: `${base}/docs/agents`,
      },
      // Named, not listed: tools come from tools/list, and these exist only for a token with the scope (docs/decisions/0026).
      'com.leads-api/operator-tools': { scope: 'leads:read', grant: 'client_credentials', tools: ['list_leads', 'get_lead'] },
      'com.leads-api/docs': { openapi: `${base}/docs/openapi-leads.json` },
    },
  };
  const body = JSON.stringify(card);
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}
