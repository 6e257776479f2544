// The workspace's MCP endpoints driven by the official v2 TypeScript client
// (@modelcontextprotocol/client 2.x, the 2026-07-28 revision): pinned to the stateless revision
// and in auto mode, against `self`, the gateway, and the proxy in front of
// @modelcontextprotocol/server-everything (an upstream of the session revisions).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";

import { connectV2, start } from "./harness.js";

const TIMEOUT_MS = 20_000;
const MODERN = "2026-07-28";

let env;
let gatewayUrl;
const clients = [];

before(async () => {
  env = await start();
  ({ gatewayUrl } = await env.agent({ title: "helper", instructions: "Be brief." }));
});

after(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await env?.stop();
});

/** A v2 client of `url` with `key`, negotiating as `mode` says (pinned by default). */
async function modernClient(url, key, mode = { pin: MODERN }) {
  const client = await connectV2(url, key, { mode });
  clients.push(client);
  return client;
}

test("self: a client pinned to 2026-07-28 discovers the endpoint, lists and calls its tools", { timeout: TIMEOUT_MS }, async () => {
  const client = await modernClient(`${env.base}/api/${env.org}/mcp/self`, env.ownerKey);
  assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
  assert.equal(client.getServerVersion()?.name, "sitefile-workspace-management");
  const names = (await client.listTools()).tools.map((t) => t.name);
  assert.ok(names.includes("API_KEY_LIST"), names.join(", "));
  const result = await client.callTool({ name: "COLLECTION_CONNECTIONS_LIST", arguments: {} });
  assert.notEqual(result.isError, true, JSON.stringify(result));
  assert.match(result.content[0].text, /everything/);
});

test("self: a client in auto mode picks the stateless revision", { timeout: TIMEOUT_MS }, async () => {
  const client = await modernClient(`${env.base}/api/${env.org}/mcp/self`, env.ownerKey, "auto");
  assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
});

test("the proxy: a pinned client reaches a session-revision upstream through it", { timeout: TIMEOUT_MS }, async () => {
  const client = await modernClient(env.proxyUrl, await env.newKey("modern-proxy"));
  assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
  const names = (await client.listTools()).tools.map((t) => t.name);
  assert.ok(names.includes("echo"), names.join(", "));
  const result = await client.callTool({ name: "echo", arguments: { message: "stateless hello" } });
  assert.match(result.content[0].text, /stateless hello/);
});

test("the gateway: a pinned client lists the members' tools and calls one", { timeout: TIMEOUT_MS }, async () => {
  const client = await modernClient(gatewayUrl, env.ownerKey);
  assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
  assert.equal(client.getInstructions?.(), "Be brief.");
  const echo = (await client.listTools()).tools.map((t) => t.name).find((n) => n.endsWith("_echo"));
  assert.ok(echo, "a prefixed echo tool");
  const result = await client.callTool({ name: echo, arguments: { message: "via the gateway" } });
  assert.match(result.content[0].text, /via the gateway/);
});
