// A real OAuth 2.1 authorization server for the tests: `oidc-provider` on a loopback port,
// with dynamic client registration, authorization code with PKCE, client credentials,
// resource indicators (RFC 8707) minting access tokens whose `aud` is the resource — ES256
// JWTs, or opaque tokens while `opaque` is set — and token introspection (RFC 7662) for the
// workspace's own confidential client.
// Its login and consent are answered programmatically: whoever follows the redirects signs
// in as `signInAs` and consents to what the client asked.

import { generateKeyPairSync } from "node:crypto";
import { createServer } from "node:http";

import Provider from "oidc-provider";

/** The confidential client allowed the client-credentials grant. */
export const SERVICE_CLIENT = { id: "other-service", secret: "other-service-secret" };

/** The workspace service's own confidential client: the one allowed to introspect. */
export const WORKSPACE_CLIENT = { id: "workspace", secret: "workspace-secret" };

/**
 * Starts the authorization server. Resolves to `{ issuer, signInAs, opaque, stop() }`; set
 * `signInAs` to choose the account the next interaction signs in, `opaque` to mint opaque
 * access tokens instead of JWTs.
 */
export async function startAuthorizationServer() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const key = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "jwk" });
  const state = { issuer, signInAs: undefined, opaque: false };
  const provider = new Provider(issuer, {
    jwks: { keys: [{ ...key, kid: "test-key", alg: "ES256", use: "sig" }] },
    cookies: { keys: ["workspace-clients-test"] },
    clientDefaults: { id_token_signed_response_alg: "ES256" },
    ttl: { AccessToken: 600, ClientCredentials: 600, Grant: 600, Interaction: 600, Session: 600 },
    scopes: ["openid", "offline_access", "mcp"],
    clients: [
      {
        client_id: SERVICE_CLIENT.id,
        client_secret: SERVICE_CLIENT.secret,
        grant_types: ["client_credentials"],
        redirect_uris: [],
        response_types: [],
        scope: "mcp",
      },
      {
        client_id: WORKSPACE_CLIENT.id,
        client_secret: WORKSPACE_CLIENT.secret,
        grant_types: ["client_credentials"],
        redirect_uris: [],
        response_types: [],
      },
    ],
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: {
        enabled: true,
        allowedPolicy: async (_ctx, client) => client.clientId === WORKSPACE_CLIENT.id,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resourceIndicator) => ({
          scope: "mcp",
          audience: resourceIndicator,
          accessTokenFormat: state.opaque ? "opaque" : "jwt",
          jwt: { sign: { alg: "ES256" } },
        }),
      },
    },
  });
  const callback = provider.callback();
  server.on("request", async (req, res) => {
    if (!req.url.startsWith("/interaction/")) return callback(req, res);
    try {
      const details = await provider.interactionDetails(req, res);
      const result =
        details.prompt.name === "login"
          ? { login: { accountId: state.signInAs } }
          : { consent: { grantId: await grantAll(provider, details) } };
      await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
    } catch (error) {
      res.statusCode = 500;
      res.end(String(error));
    }
  });
  state.stop = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(resolve);
    });
  return state;
}

/** Grants everything the consent prompt of `details` is missing; the grant's id. */
async function grantAll(provider, details) {
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
  const missing = details.prompt.details;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(" "));
  }
  return grant.save();
}
