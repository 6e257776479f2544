// OAuth 2.1 sign-in through the workspace MCP proxy (issue 13), with a real authorization
// server (oidc-provider, authorization-server.js): the MCP SDK's own flow — the 401 and the
// RFC 9728 document, authorization server discovery, dynamic client registration,
// authorization code with PKCE and a resource indicator, token — ends in `tools/list`; a
// token of another organization's member or for another audience is refused, and the token
// the SDK got for one connection is good for that connection only (RFC 8707 audience). The
// same flow with opaque access tokens, which the service introspects (RFC 7662) as its own
// confidential client.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { SERVICE_CLIENT, WORKSPACE_CLIENT, startAuthorizationServer } from "./authorization-server.js";
import { start } from "./harness.js";

const REDIRECT_URL = "http://127.0.0.1/callback";

let authServer;
let env;

before(async () => {
  authServer = await startAuthorizationServer();
  env = await start({
    oauthIssuer: authServer.issuer,
    oauthSubject: "alice",
    env: { PLATFORM_OAUTH_CLIENT_ID: WORKSPACE_CLIENT.id, PLATFORM_OAUTH_CLIENT_SECRET: WORKSPACE_CLIENT.secret },
  });
  await env.initOrg("other", "bob");
});

after(async () => {
  await env?.stop();
  await authServer?.stop();
});

/** An in-memory `OAuthClientProvider`: a public client that remembers what the SDK saves. */
class MemoryProvider {
  constructor() {
    this.saved = {};
  }
  get redirectUrl() {
    return REDIRECT_URL;
  }
  get clientMetadata() {
    return {
      client_name: "workspace-clients",
      redirect_uris: [REDIRECT_URL],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: "mcp",
    };
  }
  clientInformation() {
    return this.saved.client;
  }
  saveClientInformation(client) {
    this.saved.client = client;
  }
  tokens() {
    return this.saved.tokens;
  }
  saveTokens(tokens) {
    this.saved.tokens = tokens;
  }
  redirectToAuthorization(url) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier) {
    this.saved.verifier = verifier;
  }
  codeVerifier() {
    return this.saved.verifier;
  }
}

/**
 * Plays the browser: follows the authorization server's redirects (keeping its cookies)
 * through login and consent until the redirect to the client; the authorization code.
 */
async function authorize(url) {
  const cookies = new Map();
  let next = new URL(url);
  for (let hop = 0; hop < 10; hop += 1) {
    const cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const response = await fetch(next, { redirect: "manual", headers: cookie ? { cookie } : {} });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair.indexOf("=");
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const location = response.headers.get("location");
    assert.ok(location, `a redirect from ${next.pathname}: HTTP ${response.status} ${await response.text()}`);
    next = new URL(location, next);
    if (next.href.startsWith(REDIRECT_URL)) {
      assert.equal(next.searchParams.get("error"), null, next.searchParams.get("error_description"));
      return next.searchParams.get("code");
    }
  }
  throw new Error("too many redirects");
}

/** The SDK's whole OAuth flow as `subject` against the proxy; the connected client. */
async function signIn(subject) {
  authServer.signInAs = subject;
  const provider = new MemoryProvider();
  const first = new StreamableHTTPClientTransport(new URL(env.proxyUrl), { authProvider: provider });
  await assert.rejects(new Client({ name: "oauth", version: "1.0.0" }).connect(first), UnauthorizedError);
  assert.ok(provider.saved.client?.client_id, "the client registered itself");
  assert.ok(provider.authorizationUrl, "the SDK asked for authorization");
  assert.equal(provider.authorizationUrl.searchParams.get("code_challenge_method"), "S256");
  assert.equal(provider.authorizationUrl.searchParams.get("resource"), env.proxyUrl);
  await first.finishAuth(await authorize(provider.authorizationUrl));
  assert.ok(provider.saved.tokens?.access_token, "the SDK got an access token");
  const client = new Client({ name: "oauth", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(env.proxyUrl), { authProvider: provider });
  return { client, transport, provider };
}

test("the MCP SDK signs in with OAuth and lists the tools through the proxy", async () => {
  const { client, transport, provider } = await signIn("alice");
  const claims = JSON.parse(Buffer.from(provider.saved.tokens.access_token.split(".")[1], "base64url"));
  assert.equal(claims.aud, env.proxyUrl);
  assert.equal(claims.sub, "alice");
  await client.connect(transport);
  const { tools } = await client.listTools();
  assert.ok(
    tools.some((tool) => tool.name === "echo"),
    JSON.stringify(tools.map((t) => t.name)),
  );
  await client.close();
});

test("the SDK's token for one connection is refused by the other endpoints", async () => {
  const { provider } = await signIn("alice");
  const token = provider.saved.tokens.access_token;
  const headers = {
    authorization: `Bearer ${token}`,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  const list = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  for (const url of [`${env.base}/api/${env.org}/mcp/self`, `${env.proxyUrl}x`]) {
    const refused = await fetch(url, { method: "POST", headers, body: list });
    assert.equal(refused.status, 401, url);
    assert.match(refused.headers.get("www-authenticate"), /error="invalid_token".*aud/, url);
  }
  const minted = await fetch(`${env.base}/api/${env.org}/tools/API_KEY_CREATE`, {
    method: "POST",
    headers,
    body: JSON.stringify({ name: "minted" }),
  });
  assert.equal(minted.status, 401, await minted.text());
});

test("another organization's member is refused", async () => {
  const { client, transport } = await signIn("bob");
  await assert.rejects(client.connect(transport), /403|not valid for organization/);
});

test("a token for another audience is refused", async () => {
  const response = await fetch(`${authServer.issuer}/token`, {
    method: "POST",
    headers: {
      authorization: `Basic ${Buffer.from(`${SERVICE_CLIENT.id}:${SERVICE_CLIENT.secret}`).toString("base64")}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ grant_type: "client_credentials", scope: "mcp", resource: "https://other.example/api" }),
  });
  const token = await response.json();
  assert.equal(response.status, 200, JSON.stringify(token));
  const refused = await fetch(env.proxyUrl, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token.access_token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  assert.equal(refused.status, 401);
  const challenge = refused.headers.get("www-authenticate");
  assert.match(challenge, /error="invalid_token"/);
  assert.match(challenge, /aud/);
});

test("an opaque access token from the same flow is introspected and lists the tools", async (t) => {
  authServer.opaque = true;
  t.after(() => {
    authServer.opaque = false;
  });
  const { client, transport, provider } = await signIn("alice");
  const token = provider.saved.tokens.access_token;
  assert.equal(token.split(".").length, 1, "an opaque token, not a JWT");
  await client.connect(transport);
  const { tools } = await client.listTools();
  assert.ok(tools.some((tool) => tool.name === "echo"));
  await client.close();

  // Introspection says which resource it is for: another connection refuses it.
  const refused = await fetch(`${env.proxyUrl}x`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  assert.equal(refused.status, 401);
  assert.match(refused.headers.get("www-authenticate"), /error="invalid_token".*aud/);

  // A token the authorization server never issued is not active.
  const forged = await fetch(env.proxyUrl, {
    method: "POST",
    headers: { authorization: "Bearer not-a-token-it-issued", "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  assert.equal(forged.status, 401);
  assert.match(forged.headers.get("www-authenticate"), /error="invalid_token".*not active/);
});
