// What @modelcontextprotocol/server-everything asks its client, through the workspace MCP
// connection proxy, driven by the official MCP TypeScript SDK client (issue 13): sampling,
// elicitation and roots requests reach the client and its answers the upstream, and a
// session stream that breaks is resumed with Last-Event-ID without losing what was sent.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";

import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

import { connect, start } from "./harness.js";

// A request that never reaches the client shows as a call that never ends: each test fails
// after this.
const TIMEOUT_MS = 20_000;

let env;
const clients = [];

before(async () => {
  // Keep-alives every 200 ms: a stream whose client left is noticed before the client
  // reconnects (the SDK waits 1 s).
  env = await start({ env: { PLATFORM_STREAM_KEEPALIVE_MS: "200" } });
});

after(async () => {
  await Promise.all(clients.map(({ client }) => client.close()));
  await env?.stop();
});

/** A client of the proxy with a new API key, declaring `capabilities`. */
async function proxyClient(name, options) {
  const connected = await connect(env.proxyUrl, await env.newKey(name), options);
  clients.push(connected);
  return connected;
}

test("a sampling request of the upstream reaches the client, and its answer the upstream", { timeout: TIMEOUT_MS }, async () => {
  const { client } = await proxyClient("sampling", { capabilities: { sampling: {} } });
  const asked = [];
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    asked.push(request.params);
    return { model: "client-model", role: "assistant", content: { type: "text", text: "an answer from the client" } };
  });
  const result = await client.callTool({ name: "trigger-sampling-request", arguments: { prompt: "the prompt", maxTokens: 5 } });
  assert.equal(asked.length, 1);
  assert.match(asked[0].messages[0].content.text, /the prompt/);
  assert.equal(asked[0].maxTokens, 5);
  assert.match(result.content[0].text, /an answer from the client/);
  assert.match(result.content[0].text, /client-model/);
});

test("an elicitation request reaches the client, and what the user entered the upstream", { timeout: TIMEOUT_MS }, async () => {
  const { client } = await proxyClient("elicitation", { capabilities: { elicitation: {} } });
  let message;
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    message = request.params.message;
    return { action: "accept", content: { name: "Ada Lovelace", check: true } };
  });
  const result = await client.callTool({ name: "trigger-elicitation-request", arguments: {} });
  assert.match(message, /provide inputs/);
  const text = result.content.map((c) => c.text).join("\n");
  assert.match(text, /Name: Ada Lovelace/);
  assert.match(text, /Agreed to terms: true/);
});

test("a roots request on the session stream reaches the client, and its roots (and their change) the upstream", {
  timeout: TIMEOUT_MS,
}, async () => {
  const { client, streamOpened } = await proxyClient("roots", { capabilities: { roots: { listChanged: true } } });
  let roots = [{ uri: "file:///work/project", name: "project" }];
  let asked = 0;
  let onAsked = () => {};
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    asked += 1;
    onAsked();
    return { roots };
  });
  await streamOpened;
  const listed = async () => (await client.callTool({ name: "get-roots-list", arguments: {} })).content[0].text;
  assert.match(await listed(), /file:\/\/\/work\/project/);
  // The client's list-changed notification reaches the upstream, which asks again.
  roots = [{ uri: "file:///work/other", name: "other" }];
  const askedAgain = asked + 1;
  const reasked = new Promise((resolve) => {
    onAsked = () => {
      if (asked >= askedAgain) resolve();
    };
  });
  await client.sendRootsListChanged();
  await reasked;
  for (;;) {
    // The upstream stores the new roots once it has our answer.
    const text = await listed();
    if (text.includes("file:///work/other")) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
});

test("a client without the capability is not asked: the upstream does not offer the tool", { timeout: TIMEOUT_MS }, async () => {
  const { client } = await proxyClient("no-sampling");
  const names = (await client.listTools()).tools.map((t) => t.name);
  assert.ok(!names.includes("trigger-sampling-request"), names.join(", "));
  const { client: sampling } = await proxyClient("with-sampling", { capabilities: { sampling: {} } });
  const offered = (await sampling.listTools()).tools.map((t) => t.name);
  assert.ok(offered.includes("trigger-sampling-request"), offered.join(", "));
});

/**
 * Cuts the first GET stream as a lost connection would: the events up to the first one with
 * data pass, the next event with data is lost with the connection. Records the
 * `Last-Event-ID` of every GET and the events lost.
 */
function cutFirstStream() {
  const cut = { lastEventIds: [], lost: [] };
  cut.intercept = (init, response) => {
    if (init?.method !== "GET" || !response.ok) return response;
    cut.lastEventIds.push(new Headers(init.headers).get("last-event-id"));
    if (cut.lastEventIds.length > 1) return response;
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    let text = "";
    let passed = 0;
    const body = new ReadableStream({
      async pull(controller) {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return controller.close();
          text += decoder.decode(value, { stream: true });
          let enqueued = false;
          for (let end = text.indexOf("\n\n"); end >= 0; end = text.indexOf("\n\n")) {
            const event = text.slice(0, end + 2);
            text = text.slice(end + 2);
            const hasData = /^data:/m.test(event);
            if (hasData && passed >= 1) {
              cut.lost.push(event);
              await reader.cancel();
              return controller.error(new Error("connection lost"));
            }
            if (hasData) passed += 1;
            controller.enqueue(encoder.encode(event));
            enqueued = true;
          }
          if (enqueued) return;
        }
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  return cut;
}

test("a session stream that breaks is resumed with Last-Event-ID and delivers what was lost", { timeout: TIMEOUT_MS }, async () => {
  const cut = cutFirstStream();
  const { client, streamOpened } = await proxyClient("resume", { intercept: cut.intercept });
  await streamOpened;
  // The upstream acknowledges a subscription with a log message on the session's stream.
  const heard = [];
  let onHeard = () => {};
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    heard.push(String(n.params.data));
    onHeard();
  });
  const hear = (uri) =>
    new Promise((resolve) => {
      const check = () => {
        if (heard.some((m) => m.includes(uri))) resolve();
      };
      onHeard = check;
      check();
    });
  const first = "demo://resource/static/document/first";
  const second = "demo://resource/static/document/second";
  await client.subscribeResource({ uri: first });
  await hear(first);
  await client.subscribeResource({ uri: second });
  await hear(second);
  assert.equal(cut.lost.length, 1, "the second message was lost with the first stream");
  assert.match(cut.lost[0], new RegExp(second));
  const [fresh, resumed] = cut.lastEventIds;
  assert.equal(fresh, null);
  assert.match(resumed, /^\d+$/, "the SDK resumed with the id of the last event it got");
  assert.equal(heard.filter((m) => m.includes(second)).length, 1, `delivered once: ${heard}`);
});
