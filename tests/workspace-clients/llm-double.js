// A loopback OpenAI-compatible chat-completions provider (`PLATFORM_LLM_BASE_URL`) that
// streams text and tool calls, scripted by the last message of each request:
// - a user message containing "use tool": a call of the first offered tool whose name ends
//   in "echo", with `{"message":"hello"}`; after the tool's result: "Tool said: <result>";
// - "hold": the answer waits until `release()`;
// - otherwise: "Hello there, friend".

import { createServer } from "node:http";

/** One chat-completion chunk carrying `delta` (and `finish`, the finish reason). */
function chunk(delta, finish = null) {
  return { id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] };
}

/** The chunks answering `request`. */
function answer(request) {
  const last = request.messages.at(-1);
  if (last.role === "tool") {
    return [chunk({ role: "assistant", content: "Tool said: " }), chunk({ content: String(last.content) }), chunk({}, "stop")];
  }
  const text = typeof last.content === "string" ? last.content : JSON.stringify(last.content);
  if (text.includes("use tool")) {
    const tool = request.tools?.map((t) => t.function.name).find((name) => name.endsWith("echo"));
    if (!tool) throw new Error(`no echo tool offered: ${JSON.stringify(request.tools)}`);
    const call = (fn, extra = {}) => chunk({ tool_calls: [{ index: 0, ...extra, function: fn }] });
    return [
      call({ name: tool, arguments: "" }, { id: "call_1", type: "function" }),
      call({ arguments: '{"message":' }),
      call({ arguments: '"hello"}' }),
      chunk({}, "tool_calls"),
    ];
  }
  return [chunk({ role: "assistant", content: "Hello " }), chunk({ content: "there, " }), chunk({ content: "friend" }), chunk({}, "stop")];
}

/**
 * Starts the provider. Resolves to `{ baseUrl, requests, received(n), release(), stop() }`:
 * `received(n)` resolves once `n` requests arrived, `release()` lets the held ones answer.
 */
export async function startLlm() {
  const requests = [];
  const waiters = [];
  let releaseHeld;
  let held = new Promise((resolve) => {
    releaseHeld = resolve;
  });
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const part of req) body += part;
    const request = JSON.parse(body);
    requests.push(request);
    for (const waiter of waiters.filter((w) => requests.length >= w.n)) waiter.resolve();
    if (JSON.stringify(request.messages.at(-1).content).includes("hold")) await held;
    // A server killed while its request was held is gone.
    if (res.destroyed) return;
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (const event of answer(request)) res.write(`data: ${JSON.stringify(event)}\n\n`);
    res.end("data: [DONE]\n\n");
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}`,
    requests,
    received: (n) =>
      new Promise((resolve) => {
        if (requests.length >= n) resolve();
        else waiters.push({ n, resolve });
      }),
    release: () => {
      releaseHeld();
      held = new Promise((resolve) => {
        releaseHeld = resolve;
      });
    },
    stop: () => {
      releaseHeld();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}
