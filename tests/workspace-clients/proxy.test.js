// The workspace MCP connection proxy driven by the official MCP TypeScript SDK client
// (StreamableHTTPClientTransport) against @modelcontextprotocol/server-everything as the
// upstream (issue 13): session isolation, tasks, progress, the server-to-client stream, listings
// and the protocol version.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";

import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  LoggingMessageNotificationSchema,
  ResourceListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

import { connect, start } from "./harness.js";

// A missing relay shows as a notification that never comes: each test fails after this.
const TIMEOUT_MS = 20_000;

let env;
const clients = [];

before(async () => {
  env = await start();
});

after(async () => {
  await Promise.all(clients.map(({ client }) => client.close()));
  await env?.stop();
});

/** A client of the proxy with a new API key. */
async function proxyClient(name) {
  const connected = await connect(env.proxyUrl, await env.newKey(name));
  clients.push(connected);
  return connected;
}

/** Resolves with the first notification of `schema` that `accept` takes. */
function nextNotification(client, schema, accept = () => true) {
  return new Promise((resolve) => {
    client.setNotificationHandler(schema, (notification) => {
      if (accept(notification)) resolve(notification);
    });
  });
}

test("tools/list through the proxy lists the upstream tools", { timeout: TIMEOUT_MS }, async () => {
  const { client } = await proxyClient("list");
  const direct = await connect(env.upstreamUrl);
  clients.push(direct);
  const names = (await client.listTools()).tools.map((t) => t.name).sort();
  const upstream = (await direct.client.listTools()).tools.map((t) => t.name).sort();
  assert.deepEqual(names, upstream);
  assert.ok(names.includes("trigger-long-running-operation"));
});

test("the protocol version negotiated through the proxy is the one the upstream speaks", { timeout: TIMEOUT_MS }, async () => {
  const proxied = await proxyClient("version");
  const direct = await connect(env.upstreamUrl);
  clients.push(direct);
  assert.ok(proxied.transport.protocolVersion, "the proxy announced a version");
  assert.equal(proxied.transport.protocolVersion, direct.transport.protocolVersion);
  const capabilities = proxied.client.getServerCapabilities();
  assert.ok(capabilities.logging, "logging is delivered, so advertised");
  assert.equal(capabilities.resources?.subscribe, true);
});

test("a tool call with a progress token gets the upstream progress notifications", { timeout: TIMEOUT_MS }, async () => {
  const { client } = await proxyClient("progress");
  const progress = [];
  const result = await client.callTool({ name: "trigger-long-running-operation", arguments: { duration: 0.6, steps: 3 } }, undefined, {
    onprogress: (p) => progress.push(p),
  });
  assert.match(result.content[0].text, /Long running operation completed/);
  assert.deepEqual(
    progress.map((p) => [p.progress, p.total]),
    [
      [1, 3],
      [2, 3],
      [3, 3],
    ],
  );
});

test("what the upstream pushes on the session stream reaches its client, and only it", { timeout: TIMEOUT_MS }, async () => {
  const one = await proxyClient("stream-one");
  const two = await proxyClient("stream-two");
  await Promise.all([one.streamOpened, two.streamOpened]);
  // The upstream acknowledges a subscription with a log message on the session's stream.
  const logs = { one: [], two: [] };
  const heard = (name, { client }, uri) =>
    new Promise((resolve) => {
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        const text = String(n.params.data);
        logs[name].push(text);
        if (text.includes(uri)) resolve();
      });
    });
  const uriOne = "demo://resource/static/document/one";
  const uriTwo = "demo://resource/static/document/two";
  const oneHeard = heard("one", one, uriOne);
  const twoHeard = heard("two", two, uriTwo);
  await one.client.subscribeResource({ uri: uriOne });
  await oneHeard;
  await two.client.subscribeResource({ uri: uriTwo });
  await twoHeard;
  assert.ok(!logs.two.some((m) => m.includes(uriOne)), `session two heard session one: ${logs.two}`);
  assert.ok(!logs.one.some((m) => m.includes(uriTwo)), `session one heard session two: ${logs.one}`);
});

test("a resource one session creates is not visible to another key's session", { timeout: TIMEOUT_MS }, async () => {
  const one = await proxyClient("isolation-one");
  const two = await proxyClient("isolation-two");
  await one.streamOpened;
  const name = `only-one-${Date.now()}.txt`;
  const uri = `demo://resource/session/${name}`;
  const listChanged = nextNotification(one.client, ResourceListChangedNotificationSchema);
  const created = await one.client.callTool({
    name: "gzip-file-as-resource",
    arguments: { name, data: "data:text/plain;base64,aGVsbG8=", outputType: "resourceLink" },
  });
  assert.equal(created.isError, undefined, JSON.stringify(created));
  await listChanged;
  const listed = async ({ client }) => (await client.listResources()).resources.map((r) => r.uri);
  assert.ok((await listed(one)).includes(uri), "the creating session lists it");
  assert.ok(!(await listed(two)).includes(uri), "another session does not");
  const read = await one.client.readResource({ uri });
  assert.equal(read.contents[0].uri, uri);
  await assert.rejects(two.client.readResource({ uri }), /not found/i);
});

test("a task created in a session is read and awaited there, and is unknown to another key", { timeout: TIMEOUT_MS }, async () => {
  const one = await proxyClient("task-one");
  const two = await proxyClient("task-two");
  // server-everything's `simulate-research-query` may only be called as a task.
  const created = await one.client.request(
    {
      method: "tools/call",
      params: { name: "simulate-research-query", arguments: { topic: "proxies" }, task: { ttl: 60_000 } },
    },
    CreateTaskResultSchema,
  );
  const { taskId } = created.task;
  assert.ok(taskId, JSON.stringify(created));
  const status = await one.client.experimental.tasks.getTask(taskId);
  assert.equal(status.taskId, taskId);
  assert.ok(["working", "completed"].includes(status.status), status.status);
  const result = await one.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
  assert.match(result.content[0].text, /Research Report: proxies/);
  assert.equal((await one.client.experimental.tasks.getTask(taskId)).status, "completed");
  // Another key's session never reaches the upstream session that holds the task.
  await assert.rejects(two.client.experimental.tasks.getTask(taskId));
  await assert.rejects(two.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema));
});
