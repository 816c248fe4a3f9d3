// An OpenID Provider for the single sign-on tests (oidc-provider, the certified implementation), as its own process:
// node test/support/oidc-provider-server.mjs '<json>' with {port, clientId, clientSecret, redirectUri, accounts: {id: claims}}.
// Accounts sign in on its development login page (any password); `email` and `email_verified` are served from
// userinfo only, as many providers do. Prints `ready <issuer>` once it listens.
import Provider from 'oidc-provider';

const { port, clientId, clientSecret, redirectUri, accounts } = JSON.parse(process.argv[2]);
const issuer = `http://127.0.0.1:${port}`;
const provider = new Provider(issuer, {
  clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri], response_types: ['code'], grant_types: ['authorization_code'] }],
  async findAccount(_ctx, id) {
    const claims = accounts[id];
    return claims && { accountId: id, claims: async () => ({ sub: id, ...claims }) };
  },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  features: { devInteractions: { enabled: true } },
  pkce: { required: () => true },
  cookies: { keys: ['oidc-provider test key'] },
  // The consent is given once per account and client: the test's people are sent straight through.
  loadExistingGrant: async (ctx) => {
    const grant = new provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope('openid email profile');
    await grant.save();
    return grant;
  },
});
provider.listen(port, '127.0.0.1', () => console.log(`ready ${issuer}`));
