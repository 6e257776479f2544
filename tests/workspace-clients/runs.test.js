// Agent runs read through the AI SDK's own stream parser (`ai` 5 and 6, issue 13): the
// SDK's DefaultChatTransport reconnects to the workspace's thread stream (its default resume
// URL, `{api}/{chatId}/stream`, is the workspace's `/pilot/threads/:threadId/stream`), every
// chunk goes through the SDK's schema, and readUIMessageStream folds them into a message.
// The model is a chat-completions double (llm-double.js); runs are posted with plain fetch,
// as the spec's flow has it.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";

import * as ai5 from "ai5";
import * as ai6 from "ai6";

import { start } from "./harness.js";
import { startLlm } from "./llm-double.js";

const TIMEOUT_MS = 30_000;

let env;
let llm;
let agent;

before(async () => {
  llm = await startLlm();
  env = await start({
    env: {
      PLATFORM_LLM_BASE_URL: llm.baseUrl,
      PLATFORM_LLM_MODEL: "double",
      // The restarted server fails the killed server's run once this lease lapses.
      PLATFORM_RUN_LEASE_MS: "2000",
    },
  });
  const { item } = await env.tool("COLLECTION_VIRTUAL_MCP_CREATE", {
    data: { title: "helper", connections: [{ connection_id: env.connectionId }] },
  });
  agent = item.id;
});

after(async () => {
  await env?.stop();
  await llm?.stop();
});

/** A new thread of the agent; its id. */
async function newThread() {
  const { item } = await env.tool("COLLECTION_THREADS_CREATE", { data: { title: "t", virtual_mcp_id: agent } });
  return item.id;
}

/** Posts a user message `text` on `thread`: the run's task id. */
async function post(thread, text) {
  const response = await fetch(`${env.base}/api/${env.org}/pilot/threads/${thread}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${env.ownerKey}`, "content-type": "application/json" },
    body: JSON.stringify({
      messages: [{ id: `u-${thread}`, role: "user", parts: [{ type: "text", text }] }],
      agent: { id: agent },
      thread_id: thread,
    }),
  });
  assert.equal(response.status, 202, await response.clone().text());
  return (await response.json()).taskId;
}

/**
 * The SDK's transport on the workspace's threads. `tail`: the stream accepts
 * `text/event-stream` (the thread's tail, open before the post); otherwise a reconnection
 * (the run in progress, or none).
 */
function transport(ai, { tail = false } = {}) {
  return new ai.DefaultChatTransport({
    api: `${env.base}/api/${env.org}/pilot/threads`,
    headers: { authorization: `Bearer ${env.ownerKey}`, ...(tail ? { accept: "text/event-stream" } : {}) },
  });
}

/**
 * Reads `stream` (the SDK's parsed chunks: a chunk its schema rejects errors the stream, and
 * so this read) up to and including the first `finish`.
 */
async function untilFinish(stream, abort) {
  const chunks = [];
  for await (const chunk of stream) {
    chunks.push(chunk);
    if (chunk.type === "finish") break;
  }
  abort?.abort();
  return chunks;
}

/**
 * Opens the tail of `thread` through the SDK (resolving once the server answered, so it is
 * subscribed); `next` resolves to the chunks of the next run.
 */
async function openTail(ai, thread) {
  const abort = new AbortController();
  const stream = await transport(ai, { tail: true }).reconnectToStream({ chatId: thread, abortSignal: abort.signal });
  assert.ok(stream, "the tail is a stream");
  return { next: untilFinish(stream, abort) };
}

/** Folds `chunks` with the SDK's readUIMessageStream: the last message and the errors. */
async function fold(ai, chunks) {
  const errors = [];
  let message;
  const stream = ai.readUIMessageStream({ stream: ReadableStream.from(chunks), onError: (e) => errors.push(e.message) });
  for await (const snapshot of stream) message = snapshot;
  return { message, errors };
}

/** The text of `message`'s text parts. */
const textOf = (message) =>
  message.parts
    .filter((p) => p.type === "text")
    .map((p) => p.text)
    .join("");

for (const [name, ai] of [
  ["ai 5", ai5],
  ["ai 6", ai6],
]) {
  describe(name, () => {
    test("a run with a tool call parses, and folds into the text and the tool call the model streamed", {
      timeout: TIMEOUT_MS,
    }, async () => {
      const thread = await newThread();
      const tail = await openTail(ai, thread);
      await post(thread, "please use tool");
      const chunks = await tail.next;
      assert.equal(chunks[0].type, "start");
      const { message, errors } = await fold(ai, chunks);
      assert.deepEqual(errors, []);
      assert.equal(message.role, "assistant");
      const tool = message.parts.find((p) => p.type === "dynamic-tool" || p.type.startsWith("tool-"));
      assert.ok(tool, JSON.stringify(message.parts));
      assert.match(tool.toolName ?? tool.type, /echo$/);
      assert.deepEqual(tool.input, { message: "hello" });
      assert.equal(tool.state, "output-available");
      assert.match(JSON.stringify(tool.output), /hello/);
      assert.match(textOf(message), /^Tool said: .*hello/s);
    });

    test("a second reader resuming during the run gets the same run; with no run, 204 and null", { timeout: TIMEOUT_MS }, async () => {
      const thread = await newThread();
      const before = llm.requests.length;
      const tail = await openTail(ai, thread);
      await post(thread, "hold on, then greet");
      await llm.received(before + 1);
      // The run is in progress (the model was asked): the SDK's resume replays it from `start`.
      const abort = new AbortController();
      const resumed = await transport(ai).reconnectToStream({ chatId: thread, abortSignal: abort.signal });
      assert.ok(resumed, "a run is in progress: the resume is a stream");
      const second = untilFinish(resumed, abort);
      llm.release();
      const [first, again] = [await tail.next, await second];
      assert.deepEqual(again, first);
      const { message, errors } = await fold(ai, again);
      assert.deepEqual(errors, []);
      assert.equal(textOf(message), "Hello there, friend");

      const response = await fetch(`${env.base}/api/${env.org}/pilot/threads/${thread}/stream`, {
        headers: { authorization: `Bearer ${env.ownerKey}` },
      });
      assert.equal(response.status, 204);
      assert.equal(await transport(ai).reconnectToStream({ chatId: thread }), null);
    });

    test("a run interrupted by kill -9 ends, after the restart, with an error and a finish the SDK accepts", {
      timeout: TIMEOUT_MS,
    }, async () => {
      const thread = await newThread();
      const before = llm.requests.length;
      const dying = (await openTail(ai, thread)).next.catch((error) => error);
      await post(thread, "hold forever");
      await llm.received(before + 1);
      await env.restart();
      assert.ok((await dying) instanceof Error, "the killed server ends its readers' connections");

      const tail = await openTail(ai, thread);
      // The tail is subscribed (its response has begun) while the run still counts as in
      // progress, so the restarted server's recovery reaches it.
      const { item } = await env.tool("COLLECTION_THREADS_GET", { id: thread });
      assert.equal(item.status, "in_progress", "the lease lapsed before the reader subscribed: raise PLATFORM_RUN_LEASE_MS");
      const chunks = await tail.next;
      assert.deepEqual(
        chunks.slice(-2).map((c) => c.type),
        ["error", "finish"],
      );
      const { errors } = await fold(ai, chunks);
      assert.equal(errors.length, 1);
      assert.match(errors[0], /interrupted/);
      const { item: failed } = await env.tool("COLLECTION_THREADS_GET", { id: thread });
      assert.equal(failed.status, "failed");
    });
  });
}
